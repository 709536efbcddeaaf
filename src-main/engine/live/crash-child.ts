// Run by crash.test.ts as a process of its own, to be killed with SIGKILL: a LiveEngine applying one mirror's
// notifications (small durable batches and two downloads at a time, so a batch is caught with some resources
// committed and others in flight), its events as JSON lines on stdout. Arguments: DEST [TOPIC HUB] — with a topic,
// it subscribes; without, it only takes up what the mirror's state holds.
import { LiveEngine } from './engine.ts';

const [dest, topic, hub] = process.argv.slice(2);
const engine = new LiveEngine({ port: 0, retryBaseMs: 50, lockRetryMs: 100, reorderWaitMs: 2_000, verifyTimeoutMs: 5_000 });
engine.events.on((e) => process.stdout.write(`${JSON.stringify(e)}\n`));
await engine.start();
engine.openMirror(dest, { apply: true, batchSize: 3, concurrency: 2 });
if (topic !== undefined && hub !== undefined) await engine.subscribe({ dest, topic, hub });
