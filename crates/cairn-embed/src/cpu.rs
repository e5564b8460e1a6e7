//! What of this CPU decides how the bundled model's int8 graph computes: ONNX Runtime and
//! OpenVINO pick their kernels by the CPU as they start, and without int8 dot products
//! (VNNI) their products come out a little further from f32 and at about half the speed.
//! The doctor names these features, the engine's verdicts are kept per CPU, and the tests
//! hold an engine to a stricter figure only where the CPU has what that figure needs.

use std::fmt;

/// The features of this CPU that the embedding engines' kernels depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpu {
    /// The model's name as the system gives it, when it does.
    pub model: Option<String>,
    pub avx2: bool,
    pub avx512: bool,
    /// Int8 dot products: AVX-512 VNNI or AVX-VNNI.
    pub vnni: bool,
}

impl Cpu {
    /// This machine's CPU (read once per process).
    pub fn this() -> Self {
        static THIS: std::sync::OnceLock<Cpu> = std::sync::OnceLock::new();
        THIS.get_or_init(Self::read).clone()
    }

    fn read() -> Self {
        #[cfg(target_arch = "x86_64")]
        let (avx2, avx512, vnni) = (
            std::arch::is_x86_feature_detected!("avx2"),
            std::arch::is_x86_feature_detected!("avx512f"),
            std::arch::is_x86_feature_detected!("avx512vnni")
                || std::arch::is_x86_feature_detected!("avxvnni"),
        );
        #[cfg(not(target_arch = "x86_64"))]
        let (avx2, avx512, vnni) = (false, false, false);
        Self {
            model: model_name(),
            avx2,
            avx512,
            vnni,
        }
    }

    /// Whether int8 products run on int8 dot products here, so the int8 graph comes as
    /// close to f32 as it was measured to (0.996 to the reference vectors, against the
    /// 0.99 every supported CPU reaches).
    pub fn int8_dot_products(&self) -> bool {
        self.vnni
    }

    /// A short key of what the kernels depend on (the model and the features): a verdict
    /// kept under it is not taken for another CPU's.
    pub fn key(&self) -> String {
        let signature = format!(
            "{}|{}|{}|{}",
            self.model.as_deref().unwrap_or(""),
            self.avx2,
            self.avx512,
            self.vnni
        );
        blake3::hash(signature.as_bytes()).to_hex()[..12].to_string()
    }

    /// The features alone, as the doctor names them: "AVX2, AVX-512, VNNI" or
    /// "AVX2, no AVX-512, no VNNI".
    pub fn features(&self) -> String {
        let named = |has: bool, name: &str| {
            if has {
                name.to_string()
            } else {
                format!("no {name}")
            }
        };
        [
            named(self.avx2, "AVX2"),
            named(self.avx512, "AVX-512"),
            named(self.vnni, "VNNI"),
        ]
        .join(", ")
    }
}

impl fmt::Display for Cpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.model {
            Some(model) => write!(f, "{model} ({})", self.features()),
            None => f.write_str(&self.features()),
        }
    }
}

/// The CPU's model name from `/proc/cpuinfo`, where there is one.
fn model_name() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find_map(|line| line.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, name)| name.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_features_are_named_and_keyed() {
        let vnni = Cpu {
            model: Some("Example CPU".into()),
            avx2: true,
            avx512: true,
            vnni: true,
        };
        let plain = Cpu {
            vnni: false,
            avx512: false,
            ..vnni.clone()
        };
        assert_eq!(vnni.to_string(), "Example CPU (AVX2, AVX-512, VNNI)");
        assert_eq!(plain.features(), "AVX2, no AVX-512, no VNNI");
        assert_ne!(vnni.key(), plain.key());
        assert_eq!(vnni.key(), vnni.clone().key());
    }
}
