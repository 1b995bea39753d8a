// `npm run bench`: every benchmark in this folder, one after the other (run after `npm run build`).
const suites = [
  './proxy.mjs',
  './matching.mjs',
  './matching-eval.mjs',
  './sse-split.mjs',
  './redaction.mjs',
  './view.mjs',
  './store.mjs',
  './large-body.mjs',
  './ws-memory.mjs',
  './large-stream.mjs',
  './drift-large.mjs',
];
for (const suite of suites) {
  let mod;
  try {
    mod = await import(suite);
  } catch (err) {
    if (err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(suite.slice(2))) continue;
    throw err;
  }
  await mod.run();
}
