//! Integration tests of the harness, driven by the scripted provider.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
