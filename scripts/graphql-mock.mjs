// A GraphQL server for the GraphQL reader's tests (toolkit-http/tests/http/graphql.rs):
// graphql-yoga serving GitHub's public schema (npm @octokit/graphql-schema, its schema.json
// introspection) with mocked resolvers (@graphql-tools/mock). Yoga parses and validates every
// query it gets against the schema, so an answer with `data` means our query and variables were
// valid. Installed by scripts/install-test-peers under target/peers/graphql-npm.
//
// node scripts/graphql-mock.mjs PORT — listens on 127.0.0.1:PORT, prints "listening" when ready.
// GET /count answers how many GraphQL requests it has had; the root field `codeOfConduct` fails, so
// a query that asks for it beside another field answers `errors` beside `data`.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const prefix = process.env.GRAPHQL_NPM;
const load = (name) => require(require.resolve(name, { paths: [prefix] }));
const { buildClientSchema } = load('graphql');
const { createYoga, createGraphQLError } = load('graphql-yoga');
const { addMocksToSchema } = load('@graphql-tools/mock');

const introspection = JSON.parse(
  readFileSync(join(prefix, 'node_modules/@octokit/graphql-schema/schema.json'), 'utf8'),
);
const schema = addMocksToSchema({
  schema: buildClientSchema(introspection.data ?? introspection),
  mocks: {
    URI: () => 'https://example.com/',
    DateTime: () => '2024-01-01T00:00:00Z',
    GitTimestamp: () => '2024-01-01T00:00:00Z',
    Date: () => '2024-01-01',
    HTML: () => '<p>x</p>',
    GitObjectID: () => '0123456789abcdef0123456789abcdef01234567',
    X509Certificate: () => 'cert',
    Base64String: () => 'eA==',
    BigInt: () => '1',
    GitSSHRemote: () => 'git@example.com:a/b.git',
    PreciseDateTime: () => '2024-01-01T00:00:00.000Z',
    GitRefname: () => 'refs/heads/main',
  },
  resolvers: (store) => ({
    Query: {
      // `errors` beside `data`: a field that fails while the rest answers.
      codeOfConduct: () => {
        throw createGraphQLError('no code of conduct here');
      },
    },
  }),
});

let count = 0;
const yoga = createYoga({ schema, graphqlEndpoint: '/graphql', logging: false, maskedErrors: false });
const server = createServer((request, response) => {
  if (request.url === '/count') {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ count }));
    return;
  }
  count += 1;
  yoga(request, response);
});
server.listen(Number(process.argv[2]), '127.0.0.1', () => console.log('listening'));
