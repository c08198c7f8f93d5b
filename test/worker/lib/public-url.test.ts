import { describe, expect, it } from 'vitest'
import { urlPolicy } from '../../../worker/config'
import { checkPublicUrl, type UrlPolicy } from '../../../common/public-url'

const production: UrlPolicy = { allowLoopback: false, ownHosts: ['gateway.example.com'] }
const dev: UrlPolicy = { allowLoopback: true, ownHosts: ['gateway.example.com'] }

function refused(url: string, policy = production): string {
  const r = checkPublicUrl(url, policy)
  if (r.ok) throw new Error(`${url} was accepted`)
  return r.reason
}

describe('checkPublicUrl in production', () => {
  it('accepts public https hostnames, with a path, query and the standard ports', () => {
    for (const url of ['https://bridge.example.com/hook?token=s3cret', 'https://example.org', 'https://hooks.example.net:8443/x', 'https://EXAMPLE.com./']) {
      expect(checkPublicUrl(url, production).ok, url).toBe(true)
    }
  })

  it('refuses plain http and other schemes', () => {
    for (const url of ['http://example.com/', 'ftp://example.com/', 'file:///etc/passwd', 'javascript:alert(1)', 'ws://example.com/']) {
      expect(refused(url)).toMatch(/https/)
    }
  })

  it('refuses private IPv4 ranges', () => {
    for (const url of ['https://10.1.2.3/', 'https://172.16.0.1/', 'https://172.31.255.255/', 'https://192.168.0.10/']) {
      expect(refused(url)).toMatch(/private/)
    }
  })

  it('refuses loopback, in every spelling the URL parser turns into 127.0.0.1', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://127.8.9.10/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://0x7f.1/',
    ]) {
      expect(refused(url), url).toMatch(/loopback/)
    }
  })

  it('refuses loopback and internal names', () => {
    for (const url of [
      'https://localhost/',
      'https://api.localhost/',
      'https://localhost./',
      'https://printer.local/',
      'https://db.internal/',
      'https://metadata.google.internal/',
      'https://router.lan/',
      'https://nas.home.arpa/',
    ]) {
      expect(refused(url), url).toMatch(/internal|single-label/)
    }
  })

  it('refuses a full-width spelling of localhost (IDNA maps it)', () => {
    expect(refused('https://ｌｏｃａｌｈｏｓｔ/')).toMatch(/internal|single-label/)
  })

  it('refuses single-label hostnames', () => {
    expect(refused('https://intranet/')).toMatch(/single-label/)
  })

  it('refuses link-local and the cloud metadata address', () => {
    expect(refused('https://169.254.169.254/latest/meta-data')).toMatch(/link-local/)
  })

  it('refuses carrier-grade NAT, multicast, reserved and this-network addresses', () => {
    expect(refused('https://100.64.0.1/')).toMatch(/carrier-grade NAT/)
    expect(refused('https://100.127.255.254/')).toMatch(/carrier-grade NAT/)
    expect(refused('https://224.0.0.1/')).toMatch(/multicast/)
    expect(refused('https://239.255.255.250/')).toMatch(/multicast/)
    expect(refused('https://240.0.0.1/')).toMatch(/reserved/)
    expect(refused('https://0.0.0.0/')).toMatch(/this-network/)
    expect(refused('https://0/')).toMatch(/this-network/)
  })

  it('refuses IPv6 loopback, link-local, unique-local, multicast and unspecified', () => {
    expect(refused('https://[::1]/')).toMatch(/loopback/)
    expect(refused('https://[0:0:0:0:0:0:0:1]/')).toMatch(/loopback/)
    expect(refused('https://[fe80::1]/')).toMatch(/link-local/)
    expect(refused('https://[fd00::1]/')).toMatch(/unique-local/)
    expect(refused('https://[ff02::1]/')).toMatch(/multicast/)
    expect(refused('https://[::]/')).toMatch(/unspecified/)
  })

  it('refuses IPv4 addresses hidden in IPv6 forms (mapped, compatible, NAT64)', () => {
    expect(refused('https://[::ffff:127.0.0.1]/')).toMatch(/loopback/)
    expect(refused('https://[::ffff:7f00:1]/')).toMatch(/loopback/)
    expect(refused('https://[::ffff:169.254.169.254]/')).toMatch(/link-local/)
    expect(refused('https://[::10.0.0.1]/')).toMatch(/private/)
    expect(refused('https://[64:ff9b::192.168.1.1]/')).toMatch(/private/)
  })

  it('refuses IP literals even when public: a hostname is required', () => {
    expect(refused('https://8.8.8.8/')).toMatch(/IP addresses are not accepted/)
    expect(refused('https://[2606:4700:4700::1111]/')).toMatch(/IP addresses are not accepted/)
  })

  it("refuses the service's own hosts and their subdomains", () => {
    expect(refused('https://gateway.example.com/v1/channels/custom/inbound')).toMatch(/own hosts/)
    expect(refused('https://api.gateway.example.com/')).toMatch(/own hosts/)
    expect(checkPublicUrl('https://notgateway.example.com/', production).ok).toBe(true)
  })

  it('refuses credentials in the URL, non-standard ports, junk and overlong URLs', () => {
    expect(refused('https://user:pass@example.com/')).toMatch(/credentials/)
    expect(refused('https://example.com:22/')).toMatch(/ports/)
    expect(refused('not a url')).toMatch(/valid absolute URL/)
    expect(refused(`https://example.com/${'a'.repeat(2100)}`)).toMatch(/longer/)
  })

  it('refuses loopback even on http when the dev allowance is off', () => {
    expect(refused('http://127.0.0.1:8080/hook')).toMatch(/https/)
  })
})

describe('checkPublicUrl with the ALLOW_LOOPBACK_URLS dev allowance', () => {
  it('accepts http and https loopback URLs on any port', () => {
    for (const url of ['http://127.0.0.1:45678/r/x', 'https://127.0.0.1/', 'http://localhost:3000/', 'http://[::1]:9/']) {
      expect(checkPublicUrl(url, dev).ok, url).toBe(true)
    }
  })

  it('still refuses private, link-local and non-loopback plain-http URLs', () => {
    expect(refused('http://10.0.0.1/', dev)).toMatch(/https/)
    expect(refused('https://10.0.0.1/', dev)).toMatch(/private/)
    expect(refused('https://169.254.169.254/', dev)).toMatch(/link-local/)
    expect(refused('http://example.com/', dev)).toMatch(/https/)
  })
})

describe('urlPolicy', () => {
  const env = (vars: Partial<Env>) => ({ ALLOW_LOOPBACK_URLS: 'false', PUBLIC_BASE_URL: '', DELIVERY_TIMEOUT_MS: '10000', ...vars }) as Env

  it('treats PUBLIC_BASE_URL and the request host as our own hosts', () => {
    const p = urlPolicy(env({ PUBLIC_BASE_URL: 'https://gw.example.com' }), 'https://edge.example.net/v1/channels/custom')
    expect(p.ownHosts.sort()).toEqual(['edge.example.net', 'gw.example.com'])
    expect(checkPublicUrl('https://gw.example.com/hook', p).ok).toBe(false)
    expect(checkPublicUrl('https://edge.example.net/hook', p).ok).toBe(false)
  })

  it("refuses the operator's INTERNAL_URL_HOSTS with every name under them, on top of the built-in internal names", () => {
    const p = urlPolicy(env({ INTERNAL_URL_HOSTS: ' Corp.Example.com., svc.cluster ,' }))
    expect(p.internalHosts).toEqual(['corp.example.com', 'svc.cluster'])
    expect(checkPublicUrl('https://corp.example.com/hook', p).ok).toBe(false)
    expect(checkPublicUrl('https://crm.corp.example.com/hook', p).ok).toBe(false)
    expect(checkPublicUrl('https://api.svc.cluster/hook', p).ok).toBe(false)
    expect(checkPublicUrl('https://notcorp.example.com/hook', p).ok).toBe(true)
    // Configuration only adds: with none set, the built-in internal names are still refused.
    const none = urlPolicy(env({}))
    expect(none.internalHosts).toEqual([])
    for (const url of ['https://printer.local/', 'https://db.internal/', 'https://metadata.google.internal/', 'https://app.localhost/']) {
      expect(checkPublicUrl(url, none).ok, url).toBe(false)
    }
  })

  it('turns the loopback allowance on only for an explicit true', () => {
    expect(urlPolicy(env({ ALLOW_LOOPBACK_URLS: 'true' })).allowLoopback).toBe(true)
    expect(urlPolicy(env({ ALLOW_LOOPBACK_URLS: '1' })).allowLoopback).toBe(true)
    expect(urlPolicy(env({ ALLOW_LOOPBACK_URLS: 'false' })).allowLoopback).toBe(false)
    expect(urlPolicy(env({ ALLOW_LOOPBACK_URLS: '' })).allowLoopback).toBe(false)
  })
})
