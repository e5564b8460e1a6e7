use std::time::{Duration, Instant};

use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use pretty_assertions::assert_eq;

use super::*;

fn picture(width: u32, height: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8])
    }))
}

fn encoded(width: u32, height: u32, format: ImageFormat) -> Vec<u8> {
    encode(&picture(width, height), format).unwrap()
}

fn copy_for(side: u32) -> PictureOptions {
    PictureOptions {
        max_side: Some(side),
        ocr_languages: Vec::new(),
    }
}

#[test]
fn a_picture_is_known_by_its_bytes_not_its_name() {
    for (format, media_type) in [
        (ImageFormat::Png, "image/png"),
        (ImageFormat::Jpeg, "image/jpeg"),
        (ImageFormat::WebP, "image/webp"),
        (ImageFormat::Gif, "image/gif"),
    ] {
        let bytes = encoded(40, 30, format);
        let prepared = prepare_here(&bytes, &PictureOptions::default()).unwrap();
        assert_eq!(
            (
                prepared.media_type.as_str(),
                prepared.width,
                prepared.height
            ),
            (media_type, 40, 30)
        );
    }
    let text = prepare_here(b"# not a picture\n", &PictureOptions::default()).unwrap_err();
    assert!(text.contains("not a picture"), "{text}");
    let tiff = encoded(10, 10, ImageFormat::Tiff);
    let why = prepare_here(&tiff, &PictureOptions::default()).unwrap_err();
    assert!(why.contains("TIF"), "{why}");
}

#[test]
fn a_large_picture_is_scaled_to_the_longest_side_asked() {
    let bytes = encoded(3000, 1000, ImageFormat::Png);
    let prepared = prepare_here(&bytes, &copy_for(1568)).unwrap();
    let copy = prepared.scaled.unwrap();
    assert_eq!((copy.width, copy.height), (1568, 523));
    assert_eq!(copy.media_type, "image/png");
    let back = image::load_from_memory(&copy.data).unwrap();
    assert_eq!((back.width(), back.height()), (1568, 523));
    assert!(copy.data_url().starts_with("data:image/png;base64,iVBOR"));
}

#[test]
fn a_picture_that_fits_is_sent_as_it_is() {
    let bytes = encoded(200, 100, ImageFormat::Jpeg);
    let copy = prepare_here(&bytes, &copy_for(1568))
        .unwrap()
        .scaled
        .unwrap();
    assert_eq!(copy.data, bytes);
    assert_eq!(copy.media_type, "image/jpeg");
}

#[test]
fn a_gif_of_ten_thousand_frames_is_read_to_its_first() {
    let mut bytes = Vec::new();
    {
        let mut encoder = image::codecs::gif::GifEncoder::new(&mut bytes);
        let frames = (0..10_000u32).map(|i| {
            let shade = if i == 0 { 200 } else { 10 };
            image::Frame::new(image::RgbaImage::from_pixel(
                8,
                8,
                image::Rgba([shade, shade, shade, 255]),
            ))
        });
        encoder.encode_frames(frames).unwrap();
    }
    let started = Instant::now();
    let prepared = prepare_here(&bytes, &copy_for(64)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let copy = prepared.scaled.unwrap();
    assert_eq!(
        copy.media_type, "image/png",
        "a GIF goes to a model as its first frame"
    );
    let first = image::load_from_memory(&copy.data).unwrap().to_rgba8();
    assert_eq!(first.get_pixel(0, 0).0[0], 200);
}

#[test]
fn a_decompression_bomb_is_refused_from_its_header() {
    let bomb = cairn_testkit::pictures::png_claiming(50_000, 50_000);
    let why = prepare_here(&bomb, &copy_for(1568)).unwrap_err();
    assert!(why.contains("50000 × 50000"), "{why}");
    // Within the sides but more pixels than are decoded.
    let wide = cairn_testkit::pictures::png_claiming(19_000, 19_000);
    let why = prepare_here(&wide, &copy_for(1568)).unwrap_err();
    assert!(why.contains("MB"), "{why}");
}

#[test]
fn a_truncated_picture_is_an_error_not_a_panic() {
    for format in [ImageFormat::Jpeg, ImageFormat::Png] {
        let bytes = encoded(400, 300, format);
        let cut = &bytes[..bytes.len() / 3];
        let why = prepare_here(cut, &copy_for(100)).unwrap_err();
        assert!(why.starts_with("the picture cannot be read"), "{why}");
    }
}
