// Run the fixture Source on its own:
//   npm run fixture -- [--port N] [--resources N] [--parts N] [--entries N] [--seed N] [--no-well-known]
//                      [--no-html-link] [--no-link-header] [--no-robots] [--change-every SECONDS]
import { parseArgs } from 'node:util';
import { startFixtureSource } from './server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    resources: { type: 'string' },
    parts: { type: 'string' },
    entries: { type: 'string' },
    seed: { type: 'string' },
    'no-well-known': { type: 'boolean', default: false },
    'no-html-link': { type: 'boolean', default: false },
    'no-link-header': { type: 'boolean', default: false },
    'no-robots': { type: 'boolean', default: false },
    'change-every': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log(
    'Usage: fixture [--port N] [--resources N] [--parts N] [--entries N] [--seed N]\n' +
      '               [--no-well-known] [--no-html-link] [--no-link-header] [--no-robots] [--change-every SECONDS]',
  );
  process.exit(0);
}

const int = (value: string | undefined, name: string): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} needs a whole number, not ${value}`);
    process.exit(2);
  }
  return n;
};

const fixture = await startFixtureSource({
  port: int(values.port, 'port'),
  resources: int(values.resources, 'resources'),
  bigListParts: int(values.parts, 'parts'),
  bigListEntries: int(values.entries, 'entries'),
  seed: int(values.seed, 'seed'),
  routes: {
    wellKnown: !values['no-well-known'],
    htmlLink: !values['no-html-link'],
    linkHeader: !values['no-link-header'],
    robots: !values['no-robots'],
  },
});

console.log(fixture.url);
console.log(`Source Description: ${fixture.sourceDescriptionUrl}`);

const every = int(values['change-every'], 'change-every');
let timer: NodeJS.Timeout | undefined;
if (every) {
  const kinds = ['update', 'create', 'update', 'delete'] as const;
  let i = 0;
  timer = setInterval(() => {
    const [record] = fixture.change(kinds[i++ % kinds.length]);
    if (record) console.log(`${record.datetime} ${record.change} ${record.loc}`);
  }, every * 1000);
}

const stop = async () => {
  if (timer) clearInterval(timer);
  await fixture.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
