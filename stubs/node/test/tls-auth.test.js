'use strict';
// server.tls (mutual TLS) and server.auth from the Node client: grpc-js
// credentials for TLS, the token option for the bearer token. Certificates
// are made with openssl.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { execFileSync } = require('node:child_process');
const { RecoveryClient, Status, grpc } = require('..');
const { startRecoveryd } = require('./live-server');

function makeCerts() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rd-node-certs-'));
  const ossl = (...args) => execFileSync('openssl', args, { cwd: d, stdio: 'ignore' });
  ossl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=node test ca',
    '-keyout', 'ca.key', '-out', 'ca.crt');
  fs.writeFileSync(path.join(d, 'san.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  for (const n of ['server', 'client']) {
    ossl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${n}`, '-keyout', `${n}.key`, '-out', `${n}.csr`);
    ossl('x509', '-req', '-in', `${n}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2',
      '-out', `${n}.crt`, ...(n === 'server' ? ['-extfile', 'san.cnf'] : []));
  }
  fs.writeFileSync(path.join(d, 'token'), 'node-secret\n');
  const read = (n) => fs.readFileSync(path.join(d, n));
  return { dir: d, read };
}

test('mutual TLS and the bearer token: accepted with both, refused without', async () => {
  const certs = makeCerts();
  const p = (n) => path.join(certs.dir, n);
  const creds = grpc.credentials.createSsl(certs.read('ca.crt'), certs.read('client.key'), certs.read('client.crt'));
  const server = await startRecoveryd({}, '', {
    server: `  tls: {cert_file: ${p('server.crt')}, key_file: ${p('server.key')}, client_ca_file: ${p('ca.crt')}}
  auth: {token_file: ${p('token')}}`,
    ready: (addr) => new Promise((resolve, reject) => {
      const s = net.connect(Number(addr.split(':')[1]), '127.0.0.1', () => { s.destroy(); resolve(); });
      s.on('error', reject);
    }),
  });
  const addr = `localhost:${server.addr.split(':')[1]}`;
  const classify = async (options) => {
    const c = new RecoveryClient(addr, { rpcTimeoutMs: 3000, ...options });
    try {
      const r = await c.classify({ tool_id: 'node_tls_tool', error: { message: 'read ECONNRESET', code: 'ECONNRESET' } });
      return r.classification.retryability;
    } catch (e) {
      return e.code;
    } finally {
      c.close();
    }
  };
  try {
    assert.equal(await classify({ credentials: creds, token: 'node-secret' }), 'RETRYABILITY_TRANSIENT');
    assert.equal(await classify({ credentials: creds, token: 'wrong' }), grpc.status.UNAUTHENTICATED);
    assert.equal(await classify({ credentials: creds }), grpc.status.UNAUTHENTICATED);
    assert.equal(await classify({ token: 'node-secret' }), grpc.status.UNAVAILABLE);
    const noCert = grpc.credentials.createSsl(certs.read('ca.crt'));
    assert.equal(await classify({ credentials: noCert, token: 'node-secret' }), grpc.status.UNAVAILABLE);

    const c = new RecoveryClient(addr, { rpcTimeoutMs: 3000, credentials: creds, token: 'node-secret' });
    const res = await c.runTool('node_tls_tool', { node_tls_tool: () => 'ok' }, { turnId: 'node-tls' });
    c.close();
    assert.equal(res.status, Status.SUCCEEDED);
    assert.equal(res.fallback, false);
    assert.equal(res.outcomeRecorded, true);
  } finally {
    await server.stop();
    fs.rmSync(certs.dir, { recursive: true, force: true });
  }
});
