import { spawn } from 'node:child_process'
import { api } from './bench-kit'
import { startLocalServer } from '../e2e/local-server'
const server = await startLocalServer()
try {
  const t = await server.newTenant()
  await api(server, t.key, 'PUT', '/channels/custom', { webhook_url: 'http://127.0.0.1:9/x' })
  for (const conc of [1, 16]) {
    let next = 0; const N = 800
    const s = performance.now()
    await Promise.all(Array.from({ length: conc }, async () => { while (next < N) { const i = next++; await api(server, t.key, 'POST', '/channels/custom/inbound', { customData: { body: 'x', fromId: 'u' + (i % 50), messageSid: `${conc}-${i}` } }) } }))
    console.log('ingest conc', conc, (N / ((performance.now() - s) / 1000)).toFixed(0), '/s')
  }
  let next = 0; const N = 800; const s = performance.now()
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < N) { next++; await api(server, t.key, 'GET', '/usage') } }))
  console.log('usage conc 16', (N / ((performance.now() - s) / 1000)).toFixed(0), '/s')
  next = 0; const s2 = performance.now()
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < N) { next++; await api(server, t.key, 'GET', '/messages?limit=1') } }))
  console.log('list conc 16', (N / ((performance.now() - s2) / 1000)).toFixed(0), '/s')
} finally { await server.stop() }
