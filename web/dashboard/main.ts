/**
 * The merchant dashboard: sign in (a gateway JWT, or a wallet signing the gateway's
 * challenge), then the merchant routes' revenue, subscribers, payments (live over
 * Socket.IO), renewals, webhook health and exports.
 */
import '../shared/style.css';
import './style.css';
import { byId } from '../shared/dom.js';
import { wireExports } from './exports.js';
import { wireRevenue } from './revenue.js';
import { signedIn, signOut, wireSignIn } from './signin.js';
import { STORAGE_KEY } from './state.js';
import { wireSubscribers } from './subscribers.js';

function savedSession(): { gateway?: string; token?: string } | null {
  try {
    return JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as { gateway?: string; token?: string } | null;
  } catch {
    return null;
  }
}

wireSignIn();
wireRevenue();
wireSubscribers();
wireExports();

const fromUrl = new URLSearchParams(location.search).get('gateway');
if (fromUrl) byId('gateway', HTMLInputElement).value = fromUrl;
const saved = savedSession();
if (saved?.gateway && saved.token) signedIn(saved.gateway, saved.token).catch(() => signOut());
