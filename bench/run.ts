// `npm run bench`: the mirroring benchmarks (bench/mirror.ts), each measure beside its reference measured in the same
// run. `npm run bench -- --only=1,4 --runs=1` picks benchmarks and runs; `npm run bench:reader` measures the document
// reader, `npm run bench:dump` Resource Dump extraction from a local package.
import { runMirrorBench } from './mirror.ts';

console.log(`ResourceSync Desktop mirroring benchmarks — Node ${process.version}, ${new Date().toISOString()}`);
await runMirrorBench(process.argv.slice(2));
