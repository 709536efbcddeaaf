// `npm run bench`: every benchmark, each printing its measure beside the reference it is judged against.
import { printResult, runParseBench } from './parse.ts';

console.log(`ResourceSync Desktop benchmarks — Node ${process.version}, ${new Date().toISOString()}\n`);
printResult(await runParseBench());
