import type { Command } from 'commander';
import { isoTime } from '../clock.js';
import { streamStatus } from '../events/stream.js';
import { output, withDatabase } from './context.js';

// `loyalty stream status [--json]`: the event stream's backlog (events recorded and not yet
// acknowledged by the stream) and the last event published (DESIGN 18, docs/scaling.md).

export function registerStreamCommands(program: Command): void {
  const stream = program.command('stream').description('The event stream (EVENT_STREAM_URL): what waits to be published');
  stream
    .command('status')
    .description('Print the backlog of events not yet acknowledged by the stream, the oldest of them, and the last event published')
    .option('--json', 'print {"backlog": …, "oldest_pending_at": …, "last_published": …} as JSON', false)
    .action(async (opts: { json: boolean }) => {
      await withDatabase(async ({ db }, config) => {
        const status = await streamStatus(db);
        output(opts.json, { enabled: config.eventStream.url !== null, ...status }, () => {
          const last = status.last_published;
          return [
            `Event stream: ${config.eventStream.url ?? 'off (EVENT_STREAM_URL is not set)'}`,
            `Backlog: ${status.backlog} event${status.backlog === 1 ? '' : 's'}${status.oldest_pending_at === null ? '' : `, the oldest recorded ${isoTime(status.oldest_pending_at)}`}`,
            last === null ? 'Last published: none' : `Last published: ${last.event_id} (${last.topic}, shop ${last.shop_id}) at ${isoTime(last.published_at)}`,
          ].join('\n');
        });
      });
    });
}
