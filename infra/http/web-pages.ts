/**
 * The pages served from web/ beside the API that no read or write area owns: the hosted
 * checkout page (the session id in its path is the page's capability; the page reads the
 * session's public view and pays it through /v1/checkout/sessions/{id}/...).
 */
import type { Api } from './routes.js';
import { registerWebPage } from './web-assets.js';

export function registerCheckoutPage(api: Api): void {
  registerWebPage(api, {
    page: 'checkout', path: '/checkout/:id', tags: ['checkout'],
    summary: 'The hosted checkout page (HTML): a payer connects a Wallet Standard wallet and pays the session',
    params: {
      type: 'object', additionalProperties: false, required: ['id'],
      properties: { id: { type: 'string', pattern: '^cs_[A-Za-z0-9_-]{1,64}$', description: 'the checkout session id (cs_…)' } },
    },
  });
}
