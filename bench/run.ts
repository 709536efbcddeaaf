// `npm run bench`: the mirroring benchmarks (bench/mirror.ts), each measure beside its reference measured in the same
// run, then the live-notification benchmarks (bench/live.ts). `npm run bench -- --only=1,4 --runs=1` picks mirroring
// benchmarks (and skips the live ones unless --live is given too); `npm run bench:reader` measures the document
// reader, `npm run bench:dump` Resource Dump extraction from a local package, `npm run bench:live` the live ones alone.
import { runLiveBench } from './live.ts';
import { runMirrorBench } from './mirror.ts';

const args = process.argv.slice(2);
const only = args.some((a) => a.startsWith('--only'));
console.log(`ResourceSync Desktop mirroring benchmarks — Node ${process.version}, ${new Date().toISOString()}`);
await runMirrorBench(args.filter((a) => a !== '--live'));
if (!only || args.includes('--live')) {
  console.log('');
  await runLiveBench();
}
