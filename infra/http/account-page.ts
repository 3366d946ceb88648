/**
 * The payer's account page, /account (web/account): a wallet signs in and sees, pauses,
 * resumes and cancels what it pays for through /v1/me. The page holds no data of its own:
 * everything it shows comes from /v1/me behind the payer token.
 */
import type { Api } from './routes.js';
import { registerWebPage } from './web-assets.js';

export function registerAccountPage(api: Api): void {
  registerWebPage(api, {
    page: 'account', path: '/account', tags: ['payer'],
    summary: 'The payer\'s account page (HTML): sign in with a Wallet Standard wallet, see, pause, resume and cancel its subscriptions, revoke a delegation',
  });
}
