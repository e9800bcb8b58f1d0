// Starts PayPal's own MCP server (@paypal/agent-toolkit, pinned in package-lock.json) on stdio.
// The package exports the server class but no executable; this is the few lines PayPal's README implies.
//   PAYPAL_ACCESS_TOKEN                        the token the server uses for every call (PayPal's documented way), or
//   PAYPAL_CLIENT_ID + PAYPAL_CLIENT_SECRET    a client-credentials grant made here once, at start (through axios,
//                                              so HTTPS_PROXY applies to it as to the server's own calls)
//   PAYPAL_ENVIRONMENT=SANDBOX|PRODUCTION      default SANDBOX (the toolkit itself defaults to production)
// Logs go to stderr only: stdout is the MCP stream.
const axios = require('axios');
const { PayPalAgentToolkit } = require('@paypal/agent-toolkit/mcp');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');

const sandbox = (process.env.PAYPAL_ENVIRONMENT || 'SANDBOX').toUpperCase() !== 'PRODUCTION';
const on = (...names) => Object.fromEntries(names.map((n) => [n, true]));
const actions = {            // every tool the 1.8.0 server has
  invoices: on('create', 'list', 'get', 'send', 'sendReminder', 'cancel', 'generateQRC'),
  products: on('create', 'list', 'update', 'show'),
  subscriptionPlans: on('create', 'list', 'show'), plan: on('update'),
  subscriptions: on('create', 'show', 'cancel', 'update'), shipment: on('create', 'get', 'update'),
  orders: on('create', 'get', 'capture'), disputes: on('list', 'get', 'create'), transactions: on('list'),
  payments: on('createRefund', 'getRefunds'), insights: on('get'),
};

async function accessToken() {
  if (process.env.PAYPAL_ACCESS_TOKEN) return process.env.PAYPAL_ACCESS_TOKEN;
  const host = sandbox ? 'https://api-m.sandbox.paypal.com' : 'https://api-m.paypal.com';
  const res = await axios.post(`${host}/v1/oauth2/token`, 'grant_type=client_credentials', {
    auth: { username: process.env.PAYPAL_CLIENT_ID || '', password: process.env.PAYPAL_CLIENT_SECRET || '' },
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, timeout: 30000 });
  return res.data.access_token;
}

accessToken()
  .then((token) => new PayPalAgentToolkit({ accessToken: token, configuration: { actions, context: { sandbox } } })
    .connect(new StdioServerTransport()))
  .then(() => console.error(`paypal-mcp launcher: serving on stdio (sandbox=${sandbox})`))
  .catch((err) => { console.error('paypal-mcp launcher: cannot start:', err && err.message); process.exit(1); });
