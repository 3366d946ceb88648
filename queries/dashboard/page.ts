/**
 * The dashboard's one HTML page. Everything it loads comes from this service (no CDN):
 * /dashboard/app.css, /dashboard/app.js and the Socket.IO client at
 * /dashboard/socket.io.min.js. The script fills it in after sign-in.
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tributary · merchant dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/app.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <h1>Tributary <span class="sub">merchant dashboard</span></h1>
  <div id="who" class="who" hidden><span id="who-gateway"></span> <button type="button" id="sign-out">Sign out</button></div>
</header>
<main id="main">
  <p id="status" class="status" role="status" aria-live="polite"></p>

  <section id="sign-in" aria-labelledby="sign-in-title" class="card narrow">
    <h2 id="sign-in-title">Sign in</h2>
    <form id="token-form">
      <label for="gateway">Gateway account address</label>
      <input id="gateway" name="gateway" required autocomplete="off" spellcheck="false" pattern="[1-9A-HJ-NP-Za-km-z]{32,44}">
      <label for="token">Gateway JWT</label>
      <textarea id="token" name="token" rows="4" spellcheck="false" placeholder="eyJ… from POST /v1/gateway/{gateway}/auth/verify"></textarea>
      <div class="row">
        <button type="submit" id="token-sign-in">Sign in with token</button>
        <button type="button" id="wallet-sign-in">Sign in with wallet</button>
      </div>
      <p class="hint" id="wallet-hint">A wallet signs the gateway's challenge: the gateway's authority or its signer.</p>
    </form>
  </section>

  <div id="dashboard" hidden>
    <section aria-labelledby="revenue-title" class="card wide">
      <div class="head">
        <h2 id="revenue-title">Revenue and MRR</h2>
        <div class="controls">
          <label for="bucket">Per</label>
          <select id="bucket"><option value="day">day</option><option value="week">week</option><option value="month">month</option></select>
          <label for="mint">Mint</label>
          <select id="mint"></select>
        </div>
      </div>
      <dl class="kpis" id="kpis"></dl>
      <figure class="chart">
        <div id="chart"></div>
        <figcaption>Bars: net revenue per bucket (what recipients received). Line: MRR at the bucket's end. Amounts in the mint's base units.</figcaption>
      </figure>
      <details><summary>Revenue as a table</summary><div class="scroll"><table id="revenue-table"></table></div></details>
    </section>

    <section aria-labelledby="subs-title" class="card wide">
      <div class="head">
        <h2 id="subs-title">Subscribers</h2>
        <div class="controls">
          <label for="subs-status">Status</label>
          <select id="subs-status"><option value="">all</option><option value="active">active</option><option value="paused">paused</option><option value="ended">ended</option></select>
        </div>
      </div>
      <div class="scroll"><table id="subs-table"></table></div>
      <div class="row pager">
        <button type="button" id="subs-prev">Previous</button>
        <span id="subs-page" aria-live="polite"></span>
        <button type="button" id="subs-next">Next</button>
      </div>
    </section>

    <section aria-labelledby="live-title" class="card">
      <h2 id="live-title">Payments <span id="live-dot" class="dot" title="live updates"></span></h2>
      <ol id="live" class="feed" aria-live="polite" aria-relevant="additions"></ol>
    </section>

    <section aria-labelledby="renew-title" class="card">
      <h2 id="renew-title">Upcoming renewals</h2>
      <ol id="renewals" class="feed"></ol>
      <p class="hint">A subscriber whose renewal failed is marked past due in the subscribers table while the scheduler retries it.</p>
    </section>

    <section aria-labelledby="hooks-title" class="card">
      <h2 id="hooks-title">Webhook health</h2>
      <div class="scroll"><table id="hooks-table"></table></div>
    </section>

    <section aria-labelledby="export-title" class="card">
      <h2 id="export-title">Exports</h2>
      <div class="controls">
        <label for="export-format">Format</label>
        <select id="export-format"><option value="csv">CSV</option><option value="ndjson">NDJSON</option></select>
      </div>
      <div class="row wrap" id="exports">
        <button type="button" data-export="payments">Payments</button>
        <button type="button" data-export="policies">Policies</button>
        <button type="button" data-export="subscribers">Subscribers</button>
        <button type="button" data-export="revenue">Revenue</button>
      </div>
    </section>
  </div>
</main>
<script src="/dashboard/socket.io.min.js"></script>
<script src="/dashboard/app.js"></script>
</body>
</html>
`;
