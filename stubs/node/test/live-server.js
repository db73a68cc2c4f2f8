'use strict';
// Starts the recoveryd binary named by $RECOVERYD (tests/stubs/run_all.sh
// sets it) on a free 127.0.0.1 port with the given tool manifests, waits
// until it answers, and stops it. A missing binary fails the test: a skipped
// integration test would hide a broken client.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { spawn } = require('node:child_process');
const { RecoveryClient } = require('..');

const ROOT = path.resolve(__dirname, '..', '..', '..');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

/**
 * @param {Record<string, string>} manifests file name -> YAML text of tools.d
 * @param {string} [extra] more top-level YAML for recovery.yaml
 * @param {object} [opts] server: more YAML lines for the server section;
 *   ready: (addr) => Promise that resolves once the server answers
 */
async function startRecoveryd(manifests = {}, extra = '', opts = {}) {
  const bin = process.env.RECOVERYD;
  if (!bin || !fs.existsSync(bin)) {
    throw new Error(`RECOVERYD must name a recoveryd binary (got ${JSON.stringify(bin)}); ` +
      'tests/stubs/run_all.sh builds one');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rd-node-'));
  fs.copyFileSync(path.join(ROOT, 'config', 'rules.yaml'), path.join(dir, 'rules.yaml'));
  fs.mkdirSync(path.join(dir, 'tools.d'));
  for (const [name, text] of Object.entries(manifests)) fs.writeFileSync(path.join(dir, 'tools.d', name), text);
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'recovery.yaml'), `server:
  listen: "127.0.0.1:${port}"
${opts.server || ''}
metrics:
  listen: "127.0.0.1:0"
tools:
  directory: tools.d
classification:
  rules_file: rules.yaml
${extra}`);
  const log = fs.openSync(path.join(dir, 'recoveryd.log'), 'w');
  const proc = spawn(bin, ['--config', path.join(dir, 'recovery.yaml')], { stdio: ['ignore', log, log] });
  const addr = `127.0.0.1:${port}`;
  const probe = new RecoveryClient(addr, { rpcTimeoutMs: 500 });
  const ready = opts.ready || (() => probe.getBreakerState({}));
  const until = Date.now() + 15000;
  for (;;) {
    try {
      await ready(addr);
      break;
    } catch (e) {
      if (proc.exitCode !== null || Date.now() > until) {
        probe.close();
        proc.kill('SIGKILL');
        throw new Error(`recoveryd did not start: ${fs.readFileSync(path.join(dir, 'recoveryd.log'), 'utf8')}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  probe.close();
  return {
    addr,
    dir,
    log: () => fs.readFileSync(path.join(dir, 'recoveryd.log'), 'utf8'),
    stop: () => new Promise((resolve) => {
      if (proc.exitCode !== null) return resolve();
      proc.once('exit', () => {
        fs.closeSync(log);
        fs.rmSync(dir, { recursive: true, force: true });
        resolve();
      });
      proc.kill('SIGTERM');
    }),
  };
}

module.exports = { startRecoveryd, freePort, ROOT };
