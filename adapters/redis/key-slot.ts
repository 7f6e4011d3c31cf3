/**
 * Which of Redis Cluster's 16384 hash slots a key belongs to: CRC16 (XMODEM) of the key, or of its
 * hash tag — the part between the first `{` and the next `}`, when not empty — modulo 16384.
 */

const TABLE = (() => {
  const table = new Uint16Array(256)
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    table[byte] = crc
  }
  return table
})()

function crc16(bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!
  return crc
}

const encoder = new TextEncoder()

/**
 * The cluster slot of a key.
 *
 * @example
 * keySlot('foo') // 12182
 * keySlot('{user1}:a') === keySlot('{user1}:b') // true
 */
export function keySlot(key: string): number {
  const open = key.indexOf('{')
  if (open !== -1) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) key = key.slice(open + 1, close)
  }
  return crc16(encoder.encode(key)) % 16384
}
