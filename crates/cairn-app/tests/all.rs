//! Integration tests of Cairn as a front end assembles it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
