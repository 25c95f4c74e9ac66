import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError, notFound } from '../errors.js';
import { queryParams } from '../http/query.js';
import { CONTENT_DISPOSITION, errorResponses } from '../http/schemas.js';
import { csvStream, exportColumns, exportRecords } from './export-csv.js';
import { EXPORT_NAMES, EXPORTS, type ExportName } from './export-sources.js';

// GET /exports/{list}.csv: one operation for the four lists, each with its own filters.

const ExportParams = Type.Object({ list: Type.String({ description: EXPORT_NAMES.join(', ') }) });

/** Every list's filters: a request may use its own list's only. */
const ExportQuery = Type.Object(
  Object.fromEntries(EXPORT_NAMES.flatMap((name) => Object.entries(EXPORTS[name].filters).map(([param, schema]) => [param, Type.Optional(schema)]))),
);

export function registerExportRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/exports/:list.csv',
    {
      config: { scope: 'reports:read' },
      schema: {
        tags: ['Reports'],
        summary: 'Export a list as CSV',
        description:
          "The whole list, with its list endpoint's filters, streamed: RFC 4180, a header row, `customer.email` for nested fields; text beginning with =+-@, tab or CR gets a ' first.",
        params: ExportParams,
        querystring: ExportQuery,
        response: {
          200: {
            description: 'OK',
            headers: CONTENT_DISPOSITION,
            content: { 'text/csv': { schema: Type.String() } },
          },
          ...errorResponses('list', { 404: { name: 'NotFound', description: 'No such list', shared: 'No such record in this shop; the message says which' } }),
        },
      },
    },
    async (request, reply) => {
      const name = request.params.list as ExportName;
      if (!Object.hasOwn(EXPORTS, name)) throw notFound('export', `${name}.csv`);
      const source = EXPORTS[name];
      const params = queryParams(request);
      const foreign = [...new Set(params.keys())].filter((param) => !Object.hasOwn(source.filters, param));
      if (foreign.length > 0) {
        const details = foreign.map((param) => ({ param, code: 'unknown_parameter', message: `${param} is not a filter of ${name}` }));
        throw new AppError('invalid_parameter', details.length === 1 ? details[0]!.message : `${details.length} query parameters are unknown`, { details });
      }
      // The stream outlives the handler (and, on PostgreSQL, its connection): it reads from the pool.
      const query = await source.query(request.reads, request.shop.id, params);
      const records = exportRecords(request.reads, source, request.shop.id, query, app.clock());
      reply.header('content-disposition', `attachment; filename="${name}.csv"`).type('text/csv; charset=utf-8');
      // A stream is sent as it is read; the schema above documents it.
      return reply.send(csvStream(records, exportColumns(source.record)) as never);
    },
  );
}
