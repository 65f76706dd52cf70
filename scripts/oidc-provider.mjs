// A real authorization server for the tests: npm `oidc-provider` 9.13 (OpenID Certified),
// installed by scripts/install-test-peers into target/peers/oidc-provider, on 127.0.0.1.
//
// Usage: node scripts/oidc-provider.mjs PEERS_DIR RESOURCE_URL
// Prints its issuer (`http://127.0.0.1:PORT`) on one line once it listens; runs until killed.
//
// Configured as an MCP server's authorization server would be: dynamic registration (native
// clients with loopback redirects), resource indicators (RESOURCE_URL, scope `tools`, JWT access
// tokens for its audience), client credentials, PKCE required, refresh tokens issued to every
// client (by default only with `offline_access` and `prompt=consent`, which MCP clients do not
// send) and rotated at each use (one used twice revokes the grant). The user is a script: each
// interaction signs `user-1` in and consents to what is asked, as a person clicking through
// would.
import http from 'node:http';
import { pathToFileURL } from 'node:url';

const [peers, resource] = process.argv.slice(2);
if (!peers || !resource) {
  console.error('usage: node scripts/oidc-provider.mjs PEERS_DIR RESOURCE_URL');
  process.exit(2);
}
const { default: Provider, errors } = await import(
  pathToFileURL(`${peers}/node_modules/oidc-provider/lib/index.js`).href
);

const server = http.createServer();
await new Promise((listening) => server.listen(0, '127.0.0.1', listening));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return { scope: 'tools', audience: resource, accessTokenFormat: 'jwt' };
      },
    },
  },
  scopes: ['openid', 'offline_access', 'tools'],
  // A client may register the groups its holder is in (`groups`, an array of names): its access
  // tokens carry them in a `groups` claim, as a directory's groups reach a token.
  extraClientMetadata: { properties: ['groups'] },
  extraTokenClaims: (ctx, token) => {
    const groups = ctx.oidc.client?.groups;
    return Array.isArray(groups) && token.kind === 'ClientCredentials' ? { groups } : undefined;
  },
  pkce: { required: () => true },
  issueRefreshToken: () => true,
  rotateRefreshToken: () => true,
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
});

// The scripted user: signs in, then consents to every scope and resource asked.
async function interact(req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    return provider.interactionFinished(req, res, { login: { accountId: 'user-1' } });
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

// RFC 8693 token exchange, registered through oidc-provider's extension point for grant types
// (`registerGrantType`): a JWT access token this server issued, checked against its own keys, is
// exchanged for an access token of the client asking, for the `audience` it names. How many
// times each subject was exchanged is served at GET /exchanges ({sub: count}).
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';
const { createLocalJWKSet, jwtVerify } = await import(
  pathToFileURL(`${peers}/node_modules/jose/dist/webapi/index.js`).href
);
const exchanges = {};
let keys;
provider.registerGrantType(
  TOKEN_EXCHANGE,
  async (ctx) => {
    const { subject_token: subject, subject_token_type: type, audience } = ctx.oidc.params;
    if (!subject || type !== ACCESS_TOKEN) {
      throw new errors.InvalidRequest('subject_token of type access_token is required');
    }
    if (!audience) throw new errors.InvalidTarget('audience is required');
    keys ??= createLocalJWKSet(await (await fetch(`${issuer}/jwks`)).json());
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(subject, keys, { issuer }));
    } catch {
      throw new errors.InvalidGrant('subject_token is not an access token of this server');
    }
    exchanges[claims.sub] = (exchanges[claims.sub] ?? 0) + 1;
    const token = new provider.ClientCredentials({ client: ctx.oidc.client });
    const value = await token.save();
    ctx.body = {
      access_token: value,
      issued_token_type: ACCESS_TOKEN,
      token_type: 'Bearer',
      expires_in: token.expiration,
    };
  },
  ['subject_token', 'subject_token_type', 'audience', 'requested_token_type', 'scope'],
);

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.url === '/exchanges') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(exchanges));
  } else if (/^\/interaction\/[^/?]+/.test(req.url)) {
    interact(req, res).catch((error) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  } else {
    callback(req, res);
  }
});
console.log(issuer);
