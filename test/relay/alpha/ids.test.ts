// JID, LID and phone helpers of the alpha driver.
import { describe, expect, it } from 'vitest'
import { isLidJid, isPhoneJid, jidToPhone, personJid, phoneDigits, phoneToJid } from '../../../relay/alpha/ids'

describe('alpha ids', () => {
  it('turns an E.164 number into the phone JID and the digits a pairing code request wants', () => {
    expect(phoneToJid('+15551234567')).toBe('15551234567@s.whatsapp.net')
    expect(phoneDigits('+4915112345678')).toBe('4915112345678')
  })

  it('refuses numbers that are not E.164', () => {
    for (const bad of ['15551234567', '+0123456789', '+1 555 123 4567', '+1', '']) {
      expect(() => phoneToJid(bad)).toThrow(/E\.164/)
    }
  })

  it('reads the phone number of a phone JID with or without device, and none from a LID', () => {
    expect(jidToPhone('15551234567@s.whatsapp.net')).toBe('+15551234567')
    expect(jidToPhone('15551234567:12@s.whatsapp.net')).toBe('+15551234567')
    expect(jidToPhone('15551234567@hosted')).toBe('+15551234567')
    expect(jidToPhone('123456789012345@lid')).toBeNull()
    expect(jidToPhone(undefined)).toBeNull()
  })

  it('normalises person JIDs (device dropped, hosted servers folded) and rejects everything that is not a person', () => {
    expect(personJid('123456789012345:3@lid')).toBe('123456789012345@lid')
    expect(personJid('123456789012345@hosted.lid')).toBe('123456789012345@lid')
    expect(personJid('15551234567:1@s.whatsapp.net')).toBe('15551234567@s.whatsapp.net')
    for (const notPerson of ['120363025555555555@g.us', 'status@broadcast', '1234@newsletter', '1234567@broadcast', 'abc@s.whatsapp.net', 'garbage', '']) {
      expect(personJid(notPerson)).toBeNull()
    }
  })

  it('tells LIDs from phone JIDs', () => {
    expect(isLidJid('123@lid')).toBe(true)
    expect(isLidJid('123@s.whatsapp.net')).toBe(false)
    expect(isPhoneJid('123@s.whatsapp.net')).toBe(true)
    expect(isPhoneJid('123@lid')).toBe(false)
  })
})
