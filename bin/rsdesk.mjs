#!/usr/bin/env node
// Launcher of the rsdesk CLI. The CLI is TypeScript run by Node's own type stripping (no build step), and the
// store uses node:sqlite: both need Node 22.18 or newer. Plain JavaScript up to the version check, so an old Node
// prints a useful message instead of a syntax error.

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `rsdesk needs Node.js 22.18 or newer; this is Node.js ${process.versions.node}.\n` +
      'Inside the project, run it as `npx rsdesk …` or `npm exec rsdesk -- …`: that uses the Node 22 from the\n' +
      "project's `node` devDependency (npm install first).\n",
  );
  process.exit(1);
}

// Type stripping and node:sqlite announce themselves as experimental on every run; that is noise for CLI users.
// Silenced: ExperimentalWarning, and MODULE_TYPELESS_PACKAGE_JSON (the package has no "type": "module" because
// electron-vite must emit CommonJS; Node then says once per run that it parsed our .ts files as ES modules).
// Every other warning still reaches stderr.
const emit = process.emit;
process.emit = function (name, data, ...rest) {
  if (
    name === 'warning' &&
    data &&
    typeof data === 'object' &&
    (data.name === 'ExperimentalWarning' || data.code === 'MODULE_TYPELESS_PACKAGE_JSON')
  ) {
    return false;
  }
  return emit.call(this, name, data, ...rest);
};

// A reader that goes away (`rsdesk runs | head -1`) closes stdout: what is left to print is of no use to anyone, and
// Node's unhandled EPIPE printed a stack trace. Ended quietly instead, as a shell reports a process SIGPIPE ended
// (128 + 13); a run under way was recorded already (output comes at its end) or is taken up as a killed one is.
// A terminal that went away (its window closed, the ssh session dropped) fails every later write with EIO: the
// hangup that came with it stops a sync as SIGTERM does, and that stop must not die on its own message (it did: the
// run's last batch was lost and its lock left). What is written to a gone terminal is dropped; nobody can read it.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error && error.code === 'EPIPE') process.exit(141);
    if (error && error.code === 'EIO' && stream.isTTY) {
      stream.write = (_chunk, encoding, done) => {
        const callback = typeof encoding === 'function' ? encoding : done;
        if (typeof callback === 'function') process.nextTick(callback);
        return true;
      };
      return;
    }
    throw error;
  });
}

// Before the engine is loaded: when V8 optimizes its hot code (src-main/engine/tiering.ts says why).
const { tuneTiering } = await import('../src-main/engine/tiering.ts');
tuneTiering();
const { main } = await import('../src-main/cli/rsdesk.ts');
process.exitCode = await main(process.argv.slice(2));
