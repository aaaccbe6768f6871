//! `--screenshot` draws what a camera sees, headless, close to the stored references in
//! tests/data (made by this binary on Mesa's llvmpipe; a GPU's driver rounds a little
//! differently, hence the tolerance): the default robot from the free camera, and the red
//! box of the reference scene from its model camera. A camera that is not there is named.
mod common;

use common::*;
use std::path::Path;

/// RGB rows of a PNG file.
fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

#[test]
fn screenshots_match_their_references() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str]); 2] = [
        (
            "screenshot_default_free.png",
            &["--screenshot-view", "135,-25,2.5"],
        ),
        (
            "screenshot_eye.png",
            &[
                "--config",
                "tests/data/screenshot_world.yaml",
                "--screenshot-camera",
                "eye",
            ],
        ),
    ];
    for (reference, args) in cases {
        let made = dir.path().join(reference);
        let made_text = made.display().to_string();
        let mut all = vec!["--screenshot", &made_text, "--screenshot-size", "320x240"];
        all.extend_from_slice(args);
        let run = run_bridge(&all, &[]);
        assert!(
            run.status.success(),
            "{reference}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let (width, height, ours) = decode(&made);
        let (ref_width, ref_height, theirs) = decode(&repo().join("tests/data").join(reference));
        assert_eq!((width, height), (ref_width, ref_height), "{reference}");
        let differences: Vec<u8> = ours
            .iter()
            .zip(&theirs)
            .map(|(a, b)| a.abs_diff(*b))
            .collect();
        let mean = differences.iter().map(|d| *d as f64).sum::<f64>() / differences.len() as f64;
        let far = differences.iter().filter(|d| **d > 32).count() as f64 / differences.len() as f64;
        println!(
            "{reference}: mean difference {mean:.3} levels, {:.3} % of values off by more than 32",
            far * 100.0
        );
        assert!(
            mean < 2.0 && far < 0.01,
            "{reference}: mean {mean:.3}, far {far:.4}"
        );
        // And it is a picture, not a blank: the references hold several colours.
        let distinct: std::collections::HashSet<&[u8]> = ours.chunks(3).collect();
        assert!(
            distinct.len() > 8,
            "{reference}: {} colours",
            distinct.len()
        );
    }
}

#[test]
fn a_screenshot_camera_that_is_not_there_is_named_with_the_ones_that_are() {
    let run = run_bridge(
        &[
            "--screenshot",
            "/tmp/never.png",
            "--screenshot-camera",
            "nope",
        ],
        &[],
    );
    assert_eq!(run.status.code(), Some(2));
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(
        said.contains("'nope'") && said.contains("mobile_front"),
        "{said}"
    );
    let run = run_bridge(
        &[
            "--screenshot",
            "/tmp/never.png",
            "--screenshot-size",
            "0x10",
        ],
        &[],
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("WIDTHxHEIGHT"));
}
