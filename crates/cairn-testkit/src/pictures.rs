//! Pictures for tests: a scanned-looking receipt whose text is known, and the header of a
//! decompression bomb.

/// A 900 × 220 PNG of two lines of black text on white: [`RECEIPT_TEXT`].
pub const RECEIPT_PNG: &[u8] = include_bytes!("../fixtures/receipt.png");

/// The words in [`RECEIPT_PNG`], a line each.
pub const RECEIPT_TEXT: [&str; 2] = ["Invoice total: 42.50 EUR", "Paid by card on 3 March"];

/// A PNG whose header says `width` × `height` (its checksums right), with a token of
/// data: what a decompression bomb shows before its pixels.
pub fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&len.to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    let mut header = width.to_be_bytes().to_vec();
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 0, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, b"IHDR", &header);
    chunk(&mut png, b"IDAT", &[0x78, 0x9c, 0x03, 0x00]);
    chunk(&mut png, b"IEND", &[]);
    png
}

/// PNG's checksum (CRC-32), bit by bit: a few chunks in tests.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
