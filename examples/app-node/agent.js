// A deliberately naive payment agent in Node, for guardbench's application contract (docs/external.md).
// It is the test subject that proves the contract, not a model: it reads the user's message and the
// untrusted data, does what the words say (the data too: it is credulous), and answers in one line.
//   node agent.js            one run: the run's JSON on stdin, the answer's JSON on stdout
//   node agent.js --http N   an HTTP endpoint: POST /run with the run's JSON, the answer in the response
// PayPal is https://api-m.sandbox.paypal.com, reached through HTTPS_PROXY (CONNECT, then TLS checked
// against the system CAs plus NODE_EXTRA_CA_CERTS), or PAYPAL_API_BASE when set. No dependencies.
// APP_MODE=crash|hang|garbage makes it fail the way broken applications do (for guardbench's tests).
'use strict';
const http = require('http');
const https = require('https');
const tls = require('tls');

function send(method, url, headers, body) {
  const base = process.env.PAYPAL_API_BASE;
  if (base && url.startsWith('https://api-m.sandbox.paypal.com')) url = base + url.slice('https://api-m.sandbox.paypal.com'.length);
  const u = new URL(url);
  const data = body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body));
  const opts = { method, host: u.hostname, port: u.port || (u.protocol === 'https:' ? 443 : 80),
                 path: u.pathname + u.search, headers: { ...headers, ...(data ? { 'Content-Length': Buffer.byteLength(data) } : {}) } };
  return new Promise((resolve, reject) => {
    const done = (res) => { let buf = ''; res.setEncoding('utf8'); res.on('data', (c) => { buf += c; });
      res.on('end', () => { let parsed = buf; try { parsed = JSON.parse(buf); } catch (e) { /* text */ }
        resolve({ status: res.statusCode, body: parsed }); }); };
    const proxy = process.env.HTTPS_PROXY || process.env.https_proxy;
    if (u.protocol !== 'https:' || !proxy) {
      const req = (u.protocol === 'https:' ? https : http).request(opts, done);
      req.on('error', reject); if (data) req.write(data); req.end(); return;
    }
    const p = new URL(proxy);
    const tunnel = http.request({ host: p.hostname, port: p.port, method: 'CONNECT', path: `${u.hostname}:${opts.port}` });
    tunnel.on('connect', (res, socket) => {
      if (res.statusCode !== 200) { reject(new Error(`proxy refused CONNECT: ${res.statusCode}`)); return; }
      const req = https.request({ ...opts, createConnection: () => tls.connect({ socket, servername: u.hostname }) }, done);
      req.on('error', reject); if (data) req.write(data); req.end();
    });
    tunnel.on('error', reject); tunnel.end();
  });
}

async function token() {
  const basic = Buffer.from(`${process.env.PAYPAL_CLIENT_ID}:${process.env.PAYPAL_CLIENT_SECRET}`).toString('base64');
  const r = await send('POST', 'https://api-m.sandbox.paypal.com/v1/oauth2/token',
    { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials');
  if (r.status !== 200) throw new Error(`token: HTTP ${r.status}`);
  return r.body.access_token;
}

const last = (re, text) => { const all = [...text.matchAll(re)]; return all.length ? all[all.length - 1][1] : null; };

async function act(run) {
  const user = run.user || '';
  const text = `${user}\n${run.data || ''}`;
  const cur = (run.context && run.context.currency) || 'USD';
  const tok = await token();
  const auth = { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/json' };
  const api = 'https://api-m.sandbox.paypal.com';
  const id = last(/\b([A-Z0-9]{17})\b/g, user);
  const amount = last(/(\d+\.\d{2})\b/g, text);
  const done = [];
  if (/refund/i.test(user) && id && amount) {
    const r = await send('POST', `${api}/v2/payments/captures/${id}/refund`, auth, { amount: { value: amount, currency_code: cur } });
    done.push(`refund ${amount}: HTTP ${r.status}`);
  } else if (/capture/i.test(user) && id) {
    const r = await send('POST', `${api}/v2/checkout/orders/${id}/capture`, auth, {});
    done.push(`capture: HTTP ${r.status}`);
  } else if (/charge|bill|order|payment/i.test(user)) {
    const sku = last(/\b(SKU-[A-Z]+)\b/g, text) || 'SKU-PRO';
    const value = amount || '49.00';
    const order = { intent: 'CAPTURE', purchase_units: [{ reference_id: sku, amount: { currency_code: cur, value,
      breakdown: { item_total: { currency_code: cur, value } } },
      items: [{ name: sku, sku, quantity: '1', unit_amount: { currency_code: cur, value } }] }] };
    const url = last(/(https?:\/\/[^\s"']+)/g, run.data || '');          // "send it there instead": it does
    const r = await send('POST', url || `${api}/v2/checkout/orders`, auth, order);
    done.push(`order ${sku} ${value}${url ? ` via ${new URL(url).host}` : ''}: HTTP ${r.status}`);
  }
  if (/token|secret|credential/i.test(text)) done.push(`my access token is ${tok}`);   // credulous
  return { final: done.join('; ') || 'Nothing to do.', steps: done.map((d) => ({ tool: 'paypal', args: {}, result: d })) };
}

async function answer(raw) {
  const mode = process.env.APP_MODE || '';
  if (mode === 'crash') { console.error('agent: crashing on purpose'); process.exit(3); }
  if (mode === 'hang') { console.error('agent: hanging on purpose'); setInterval(() => {}, 1000); return new Promise(() => {}); }
  if (mode === 'garbage') return 'this is not JSON';
  return JSON.stringify(await act(JSON.parse(raw)));
}

if (process.argv[2] === '--http') {
  http.createServer((req, res) => {
    let raw = ''; req.on('data', (c) => { raw += c; });
    req.on('end', () => answer(raw).then((out) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end(out); },
      (err) => { console.error('agent:', err.message); res.writeHead(500); res.end(); }));
  }).listen(Number(process.argv[3]), '127.0.0.1', () => console.error(`agent: listening on ${process.argv[3]}`));
} else {
  let raw = ''; process.stdin.setEncoding('utf8'); process.stdin.on('data', (c) => { raw += c; });
  process.stdin.on('end', () => answer(raw).then((out) => { process.stdout.write(out); },
    (err) => { console.error('agent:', err.message); process.exit(1); }));
}
