// Baseline for the auth benchmark: bare Fastify answering a fixed JSON body, no auth, no store.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const body = { id: 'hcxlk_x', type: 'configuration', api_key_access: {}, environment: { name: 'p', slug: 'p' }, team: { name: 't', slug: 't' } };
app.get('/1/auth', async () => body);
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`LISTENING ${app.server.address().port}`);
