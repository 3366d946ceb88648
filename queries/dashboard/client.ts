/**
 * The dashboard's browser script, served as /dashboard/app.js. Plain ES2020 with no
 * build step; it avoids template literals so it can live in this String.raw. It signs
 * in (a pasted gateway JWT, or a wallet found through the Wallet Standard or an injected
 * `window.solana` signing the gateway challenge), then reads the merchant routes with
 * the JWT and listens on the Socket.IO namespace /merchant for live payments.
 * Untrusted text only ever goes into textContent.
 */
export const DASHBOARD_JS = String.raw`(function () {
'use strict';
var S = { gateway: null, token: null, bucket: 'day', mint: null, offset: 0, limit: 25, status: '', socket: null, series: [], refreshTimer: null, liveEnded: null };
var $ = function (id) { return document.getElementById(id); };

function el(tag, props, kids) {
  var n = document.createElement(tag);
  if (props) Object.keys(props).forEach(function (k) {
    if (k === 'text') n.textContent = props[k];
    else if (k === 'className') n.className = props[k];
    else n.setAttribute(k, props[k]);
  });
  (kids || []).forEach(function (c) { if (c != null) n.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
  return n;
}
function say(msg, isError) { var s = $('status'); s.textContent = msg || ''; s.className = isError ? 'status error' : 'status'; }
function group(str) {
  if (str == null) return '—';
  var parts = String(str).split('.');
  return parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (parts[1] ? '.' + parts[1] : '');
}
function when(sec) { return sec == null ? '—' : new Date(sec * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC'; }
function short(k) { return k ? k.slice(0, 4) + '…' + k.slice(-4) : '—'; }
function keyCell(k) { return el('td', { className: 'mono', title: k || '', text: short(k) }); }

function api(path) {
  return fetch(path, { headers: { authorization: 'Bearer ' + S.token } }).then(function (r) {
    return r.json().catch(function () { return {}; }).then(function (b) {
      if (r.status === 401 || r.status === 403) { signOut(); throw new Error(b.error || 'not authorized'); }
      if (!r.ok) throw new Error(b.error || ('HTTP ' + r.status));
      return b.data;
    });
  });
}
function base() { return '/v1/gateway/' + encodeURIComponent(S.gateway) + '/merchant/'; }

// ---- sign-in ----
function signedIn(gateway, token) {
  S.gateway = gateway; S.token = token;
  return api(base() + 'overview').then(function (ov) {
    sessionStorage.setItem('tributary.dashboard', JSON.stringify({ gateway: gateway, token: token }));
    $('sign-in').hidden = true; $('dashboard').hidden = false; $('who').hidden = false;
    $('who-gateway').textContent = gateway;
    say('Signed in.');
    renderOverview(ov);
    connectLive();
    return Promise.all([loadRevenue(), loadSubscribers()]);
  });
}
function signOut() {
  sessionStorage.removeItem('tributary.dashboard');
  if (S.socket) { S.socket.close(); S.socket = null; }
  S.token = null;
  $('dashboard').hidden = true; $('who').hidden = true; $('sign-in').hidden = false;
}
$('token-form').addEventListener('submit', function (e) {
  e.preventDefault();
  var gateway = $('gateway').value.trim(); var token = $('token').value.trim();
  if (!token) { say('Paste a gateway JWT, or sign in with a wallet.', true); $('token').focus(); return; }
  say('Signing in…');
  signedIn(gateway, token).catch(function (err) { say('Sign-in failed: ' + err.message, true); });
});
$('sign-out').addEventListener('click', function () { signOut(); say('Signed out.'); });

// Wallet Standard discovery (wallets register themselves), with an injected provider as fallback
var wallets = [];
function register() {
  Array.prototype.slice.call(arguments).forEach(function (w) {
    if (w && w.features && w.features['solana:signMessage'] && w.features['standard:connect']) wallets.push(w);
  });
  return function () {};
}
window.addEventListener('wallet-standard:register-wallet', function (e) { try { e.detail({ register: register }); } catch (err) { /* a wallet's own error */ } });
try { window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: { register: register } })); } catch (err) { /* old browser */ }

function walletSign(message) {
  var w = wallets[0];
  if (w) {
    return w.features['standard:connect'].connect().then(function (r) {
      var account = r.accounts[0];
      return w.features['solana:signMessage'].signMessage({ account: account, message: message }).then(function (out) {
        return { signer: account.address, signature: out[0].signature };
      });
    });
  }
  var p = (window.phantom && window.phantom.solana) || window.solana;
  if (!p || !p.signMessage) return Promise.reject(new Error('no Solana wallet found in this browser'));
  return Promise.resolve(p.connect()).then(function () {
    return p.signMessage(message, 'utf8').then(function (out) { return { signer: p.publicKey.toString(), signature: out.signature }; });
  });
}
function post(path, body) {
  return fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(function (r) {
    return r.json().then(function (b) { if (!r.ok) throw new Error(b.error || ('HTTP ' + r.status)); return b; });
  });
}
$('wallet-sign-in').addEventListener('click', function () {
  var gateway = $('gateway').value.trim();
  if (!gateway) { say('Enter the gateway account address first.', true); $('gateway').focus(); return; }
  say('Asking the wallet to sign the challenge…');
  var auth = '/v1/gateway/' + encodeURIComponent(gateway) + '/auth/';
  post(auth + 'challenge', {}).then(function (ch) {
    // sign only a gateway sign-in challenge for this gateway (purpose|service|gateway|random)
    var f = String(ch.nonce).split('|');
    if (f.length !== 4 || f[0] !== 'tributary-gateway-sign-in' || f[2] !== gateway) throw new Error('the server sent a challenge that is not a sign-in for this gateway; not signing it');
    return walletSign(new TextEncoder().encode(ch.nonce)).then(function (signed) {
      // the nonce named: another tab's newer challenge does not get in the way
      return post(auth + 'verify', { signer: signed.signer, signature: Array.prototype.slice.call(signed.signature), nonce: ch.nonce });
    });
  }).then(function (v) { return signedIn(gateway, v.token); })
    .catch(function (err) { say('Wallet sign-in failed: ' + err.message, true); });
});

// ---- revenue ----
function loadRevenue() {
  var q = 'revenue?bucket=' + S.bucket + (S.mint ? '&tokenMint=' + encodeURIComponent(S.mint) : '');
  return api(base() + q).then(function (r) {
    S.series = r.series;
    var mints = r.series.map(function (s) { return s.tokenMint; });
    var sel = $('mint');
    if (sel.options.length === 0 || !S.mint) {
      sel.textContent = '';
      mints.forEach(function (m) { sel.appendChild(el('option', { value: m, text: short(m) })); });
      if (!S.mint && mints.length) S.mint = mints[0];
      sel.value = S.mint || '';
    }
    var series = r.series.filter(function (s) { return s.tokenMint === S.mint; })[0] || { buckets: [] };
    renderKpis(series.buckets); renderChart(series.buckets); renderRevenueTable(series.buckets);
  }).catch(function (err) { say('Revenue: ' + err.message, true); });
}
function sum(list, k) { return list.reduce(function (a, b) { return a + BigInt(b[k]); }, BigInt(0)).toString(); }
function renderKpis(b) {
  var dl = $('kpis'); dl.textContent = '';
  var last = b[b.length - 1];
  [['Gross', group(sum(b, 'gross'))], ['Net', group(sum(b, 'net'))], ['Fees', group((BigInt(sum(b, 'gatewayFee')) + BigInt(sum(b, 'protocolFee'))).toString())],
   ['Payments', group(b.reduce(function (a, x) { return a + x.payments; }, 0))], ['MRR now', group(last ? last.mrr : '0')],
   ['New / ended', b.reduce(function (a, x) { return a + x.newSubscriptions; }, 0) + ' / ' + b.reduce(function (a, x) { return a + x.endedSubscriptions; }, 0)]]
    .forEach(function (kv) { dl.appendChild(el('div', null, [el('dt', { text: kv[0] }), el('dd', { text: String(kv[1]) })])); });
}
var NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs) { var n = document.createElementNS(NS, tag); Object.keys(attrs || {}).forEach(function (k) { n.setAttribute(k, attrs[k]); }); return n; }
function renderChart(b) {
  var W = 800, H = 260, L = 8, R = 8, T = 16, B = 28;
  var box = $('chart'); box.textContent = '';
  var nets = b.map(function (x) { return Number(x.net); }); var mrrs = b.map(function (x) { return Number(x.mrr); });
  var maxNet = Math.max.apply(null, nets.concat([1])); var maxMrr = Math.max.apply(null, mrrs.concat([1]));
  var total = sum(b, 'net');
  var s = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'Net revenue per ' + S.bucket + ' over ' + b.length + ' buckets, ' + group(total) + ' in all; MRR now ' + group(b.length ? b[b.length - 1].mrr : '0') });
  var step = (W - L - R) / Math.max(b.length, 1);
  b.forEach(function (x, i) {
    var h = (H - T - B) * nets[i] / maxNet;
    var r = svg('rect', { x: L + i * step + step * 0.1, y: H - B - h, width: Math.max(step * 0.8, 1), height: h, class: 'bar' });
    var t = svg('title'); t.textContent = when(x.start) + ': net ' + group(x.net) + ', ' + x.payments + ' payments, MRR ' + group(x.mrr); r.appendChild(t);
    s.appendChild(r);
  });
  var pts = b.map(function (x, i) { return (L + i * step + step / 2).toFixed(1) + ',' + (H - B - (H - T - B) * mrrs[i] / maxMrr).toFixed(1); }).join(' ');
  if (b.length) s.appendChild(svg('polyline', { points: pts, class: 'mrr' }));
  if (b.length) {
    var a = svg('text', { x: L, y: H - 8 }); a.textContent = when(b[0].start).slice(0, 10); s.appendChild(a);
    var z = svg('text', { x: W - R, y: H - 8, 'text-anchor': 'end' }); z.textContent = when(b[b.length - 1].start).slice(0, 10); s.appendChild(z);
    var m = svg('text', { x: L, y: 12 }); m.textContent = 'net max ' + group(String(Math.round(maxNet))) + ' · MRR max ' + group(String(Math.round(maxMrr))); s.appendChild(m);
  }
  box.appendChild(s);
}
function renderRevenueTable(b) {
  var t = $('revenue-table'); t.textContent = '';
  var cols = [['start', 'Bucket'], ['gross', 'Gross'], ['gatewayFee', 'Gateway fee'], ['protocolFee', 'Protocol fee'], ['net', 'Net'], ['payments', 'Payments'], ['newSubscriptions', 'New'], ['endedSubscriptions', 'Ended'], ['mrr', 'MRR']];
  t.appendChild(el('thead', null, [el('tr', null, cols.map(function (c) { return el('th', { scope: 'col', className: c[0] === 'start' ? '' : 'num', text: c[1] }); }))]));
  var body = el('tbody');
  b.slice().reverse().forEach(function (x) {
    body.appendChild(el('tr', null, cols.map(function (c) { return el('td', { className: c[0] === 'start' ? '' : 'num', text: c[0] === 'start' ? when(x.start).slice(0, 10) : group(x[c[0]]) }); })));
  });
  t.appendChild(body);
}
$('bucket').addEventListener('change', function () { S.bucket = $('bucket').value; loadRevenue(); });
$('mint').addEventListener('change', function () { S.mint = $('mint').value; loadRevenue(); });

// ---- subscribers ----
function loadSubscribers() {
  var q = 'subscribers?limit=' + S.limit + '&offset=' + S.offset + (S.status ? '&status=' + S.status : '');
  return api(base() + q).then(function (page) {
    var t = $('subs-table'); t.textContent = '';
    var head = ['Payer', 'Mint', 'Status', 'Policies', 'Total paid', 'Payments', 'Last payment', 'Next due', 'Past due'];
    t.appendChild(el('thead', null, [el('tr', null, head.map(function (h, i) { return el('th', { scope: 'col', className: i >= 3 && i <= 5 ? 'num' : '', text: h }); }))]));
    var body = el('tbody');
    page.items.forEach(function (s) {
      body.appendChild(el('tr', null, [keyCell(s.payer), keyCell(s.tokenMint), el('td', null, [el('span', { className: 'badge ' + s.status, text: s.status })]),
        el('td', { className: 'num', text: String(s.activePolicies) + ' / ' + s.policies.length }), el('td', { className: 'num', text: group(s.totalPaid) }),
        el('td', { className: 'num', text: String(s.payments) }), el('td', { text: when(s.lastPaymentAt) }), el('td', { text: when(s.nextDue) }),
        el('td', { text: s.pastDue ? 'yes' : 'no' })]));
    });
    if (!page.items.length) body.appendChild(el('tr', null, [el('td', { colspan: '9', text: 'No subscribers yet.' })]));
    t.appendChild(body);
    var to = Math.min(S.offset + page.items.length, page.total);
    $('subs-page').textContent = (page.total ? (S.offset + 1) + '–' + to : '0') + ' of ' + page.total;
    $('subs-prev').disabled = S.offset === 0; $('subs-next').disabled = to >= page.total;
  }).catch(function (err) { say('Subscribers: ' + err.message, true); });
}
$('subs-status').addEventListener('change', function () { S.status = $('subs-status').value; S.offset = 0; loadSubscribers(); });
$('subs-prev').addEventListener('click', function () { S.offset = Math.max(0, S.offset - S.limit); loadSubscribers(); });
$('subs-next').addEventListener('click', function () { S.offset += S.limit; loadSubscribers(); });

// ---- overview: payments, renewals, webhooks ----
function paymentItem(p, fresh) {
  var li = el('li', { className: fresh ? 'new' : '' }, [
    el('span', null, [el('strong', { text: group(p.amount) }), ' ', el('span', { className: 'mono', title: p.payer || '', text: 'from ' + short(p.payer) })]),
    el('span', { className: 'hint', text: (p.trackingId ? p.trackingId + ' · ' : '') + when(p.at) })]);
  li.setAttribute('data-signature', p.signature);
  return li;
}
function renderOverview(ov) {
  var live = $('live'); live.textContent = '';
  ov.recentPayments.forEach(function (p) { live.appendChild(paymentItem(p, false)); });
  if (!ov.recentPayments.length) live.appendChild(el('li', { className: 'hint empty', text: 'No payments yet.' }));
  var rn = $('renewals'); rn.textContent = '';
  ov.upcomingRenewals.forEach(function (r) {
    rn.appendChild(el('li', null, [el('span', { className: 'mono', title: r.policy, text: short(r.policy) }), el('span', { text: when(r.nextDue) })]));
  });
  if (!ov.upcomingRenewals.length) rn.appendChild(el('li', { className: 'hint', text: 'Nothing due.' }));
  var t = $('hooks-table'); t.textContent = '';
  t.appendChild(el('thead', null, [el('tr', null, ['Endpoint', 'Active', 'Delivered 24 h', 'Pending', 'Dead 24 h', 'Last attempt'].map(function (h) { return el('th', { scope: 'col', text: h }); }))]));
  var body = el('tbody');
  ov.webhooks.forEach(function (w) {
    var last = w.lastAttemptAt ? (w.lastStatus || 'error') + ' at ' + w.lastAttemptAt.slice(0, 16).replace('T', ' ') : '—';
    body.appendChild(el('tr', null, [el('td', { className: 'mono', text: w.endpointUrl }), el('td', { text: w.active ? 'yes' : 'no' }),
      el('td', { className: 'num ok', text: String(w.delivered) }), el('td', { className: 'num', text: String(w.pending) }),
      el('td', { className: 'num' + (w.dead ? ' bad' : ''), text: String(w.dead) }), el('td', { title: w.lastError || '', text: last })]));
  });
  if (!ov.webhooks.length) body.appendChild(el('tr', null, [el('td', { colspan: '6', text: 'No webhooks registered for this gateway.' })]));
  t.appendChild(body);
}

// ---- live ----
function connectLive() {
  if (typeof io !== 'function') return;
  if (S.socket) S.socket.close();
  var sock = io('/merchant', { path: '/ws/v1', auth: { gateway: S.gateway, token: S.token }, transports: ['websocket'] });
  S.socket = sock;
  sock.on('connect', function () { $('live-dot').className = 'dot on'; $('live-dot').title = 'live'; document.body.setAttribute('data-live', 'on'); });
  // the server ends a feed whose credential expired or was revoked (error first, then disconnect): no reconnecting then
  sock.on('error', function (e) { if (e && e.message) S.liveEnded = e.message; });
  sock.on('disconnect', function (reason) {
    $('live-dot').className = 'dot';
    $('live-dot').title = reason === 'io server disconnect' ? 'ended: ' + (S.liveEnded || 'sign in again') : 'reconnecting';
  });
  sock.on('connect_error', function (err) { $('live-dot').className = 'dot'; if (/unauthorized|forbidden/.test(err.message)) sock.close(); });
  sock.on('payment', function (msg) {
    var d = msg.data;
    var live = $('live');
    if (live.querySelector('[data-signature="' + d.signature + '"]')) return;
    var empty = live.querySelector('.empty'); if (empty) empty.remove();
    live.insertBefore(paymentItem({ signature: d.signature, amount: d.amount, payer: d.payer, trackingId: d.trackingId, at: d.timestamp }, true), live.firstChild);
    while (live.children.length > 50) live.removeChild(live.lastChild);
    // the read models commit a moment after the broadcast
    clearTimeout(S.refreshTimer);
    S.refreshTimer = setTimeout(function () { loadRevenue(); loadSubscribers(); }, 1500);
  });
}

// ---- exports ----
Array.prototype.forEach.call(document.querySelectorAll('[data-export]'), function (b) {
  b.addEventListener('click', function () {
    var kind = b.getAttribute('data-export'); var fmt = $('export-format').value;
    var q = 'export/' + kind + '?format=' + fmt + (kind === 'revenue' ? '&bucket=' + S.bucket : '');
    b.disabled = true; say('Preparing the ' + kind + ' export…');
    fetch(base() + q, { headers: { authorization: 'Bearer ' + S.token } }).then(function (r) {
      if (!r.ok) return r.json().then(function (e) { throw new Error(e.error || ('HTTP ' + r.status)); });
      var m = /filename="([^"]+)"/.exec(r.headers.get('content-disposition') || '');
      return r.blob().then(function (blob) {
        var a = el('a', { href: URL.createObjectURL(blob), download: m ? m[1] : kind + '.' + fmt });
        document.body.appendChild(a); a.click(); a.remove();
        setTimeout(function () { URL.revokeObjectURL(a.href); }, 10000);
        say('Exported ' + kind + '.');
      });
    }).catch(function (err) { say('Export failed: ' + err.message, true); }).finally(function () { b.disabled = false; });
  });
});

// ---- start ----
var saved = null;
try { saved = JSON.parse(sessionStorage.getItem('tributary.dashboard') || 'null'); } catch (err) { saved = null; }
var fromUrl = new URLSearchParams(location.search).get('gateway');
if (fromUrl) $('gateway').value = fromUrl;
if (saved && saved.gateway && saved.token) signedIn(saved.gateway, saved.token).catch(function () { signOut(); });
})();
`;
