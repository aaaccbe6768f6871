//! One error type for everything a user can get wrong: a config, a model file, a CLI flag.
//! Its text always names where the problem is (file, then element or field path), so the
//! CLI can print it as one line and exit with code 2.
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct InputError {
    /// The file (or a stand-in such as `<robot_description>`) that holds the bad input.
    pub origin: String,
    /// Element or field path inside it, e.g. `robots[0].urdf` or `link 'base'/visual[1]`.
    pub location: Option<String>,
    pub message: String,
}

impl InputError {
    /// `message` is any error or text: errors of the lower layers become text here.
    pub fn new(origin: impl Into<String>, message: impl fmt::Display) -> Self {
        Self {
            origin: origin.into(),
            location: None,
            message: message.to_string(),
        }
    }

    pub fn at(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(location) => write!(f, "{}: {}: {}", self.origin, location, self.message),
            None => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for InputError {}

pub type InputResult<T> = Result<T, InputError>;
