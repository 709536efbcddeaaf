// `npm run bench:reader`: the document reader's benchmark, each measure beside the reference it is judged against.
import { printResult, runParseBench } from './parse.ts';
import { runResyncReference } from './resync.ts';
import { runDumpBench } from './dump.ts';

// `npm run bench:reader -- --dump` adds the 1 GiB Resource Dump extraction from a local package (generating it takes
// ~40 s the first time); `npm run bench:dump` runs it alone.
const withDump = process.argv.includes('--dump');

console.log(`ResourceSync Desktop benchmarks — Node ${process.version}, ${new Date().toISOString()}\n`);
const result = await runParseBench();
printResult(result);

const resync = runResyncReference(result.file.path);
if ('unavailable' in resync) {
  console.log(`resync (Python reference client): not run — ${resync.unavailable}`);
} else {
  const label = 'resync ResourceList.read (Python)'.padEnd(34);
  console.log(
    `${label} ${`${resync.seconds.toFixed(3)} s`.padStart(10)} ${''.padStart(10)} ${`${resync.rssGrowthMb.toFixed(1)} MB`.padStart(11)} ${`${resync.peakRssMb.toFixed(1)} MB`.padStart(11)}   reference client, ${resync.entries.toLocaleString('en')} entries`,
  );
  console.log(`reader vs resync on the same file: ${(resync.seconds / result.readerCold.seconds).toFixed(1)}× faster on a first run, ${(resync.seconds / result.readerBest.seconds).toFixed(1)}× warm`);
}

if (withDump) {
  console.log('');
  await runDumpBench();
} else {
  console.log('\n(Resource Dump extraction from a local file not run: add --dump, or run npm run bench:dump)');
}
