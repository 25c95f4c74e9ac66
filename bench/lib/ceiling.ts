import Fastify from 'fastify';

// The ceiling of a list benchmark: a bare Fastify route, in a process of its own, answering a
// fixed JSON body of the given size. argv: port, body file.

const [port, bodyFile] = process.argv.slice(2);
const { readFileSync } = await import('node:fs');
const body = readFileSync(bodyFile!, 'utf8');
const app = Fastify({ logger: false });
app.get('/*', async (_request, reply) => reply.type('application/json; charset=utf-8').send(body));
await app.listen({ host: '127.0.0.1', port: Number(port) });
