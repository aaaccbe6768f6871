//! A planned output filled from the state whose messages leave as serialized bytes (CDR):
//! the form every sink takes, the ROS node's publishers, the Foxglove view and MCAP files.
use super::{Output, Tick, Topic};
use crate::messages::{Message, TypeName, cdr, definition};

/// A planned output filled from the state, as a sink runs it.
pub trait Encoded: Send {
    fn topic(&self) -> &Topic;
    /// Its message type (`sensor_msgs/msg/JointState`).
    fn type_name(&self) -> TypeName;
    /// Its `ros2msg` schema (see `definition::ros2msg`).
    fn schema(&self) -> String;
    /// Follows the state every cycle, due or not.
    fn observe(&mut self, tick: &Tick);
    /// This tick's message as CDR in `bytes`; false when there is nothing new to send (or
    /// the message cannot be serialized, which the caller counts as a failure).
    fn fill(&mut self, tick: &Tick, bytes: &mut Vec<u8>) -> Result<bool, cdr::CdrError>;
    /// How its readings lag the state.
    fn timing(&self) -> super::Timing;
}

/// An output filled from the state, serialized.
pub struct EncodedOutput<O>(O);

impl<O> EncodedOutput<O> {
    pub fn new(output: O) -> Self {
        Self(output)
    }
}

impl<O: Output + Send> Encoded for EncodedOutput<O> {
    fn topic(&self) -> &Topic {
        self.0.topic()
    }

    fn type_name(&self) -> TypeName {
        O::Message::type_name()
    }

    fn schema(&self) -> String {
        definition::ros2msg::<O::Message>()
    }

    fn observe(&mut self, tick: &Tick) {
        self.0.observe(tick);
    }

    fn timing(&self) -> super::Timing {
        self.0.timing()
    }

    fn fill(&mut self, tick: &Tick, bytes: &mut Vec<u8>) -> Result<bool, cdr::CdrError> {
        match self.0.fill(tick) {
            Some(message) => cdr::encode_into(message, bytes).map(|()| true),
            None => Ok(false),
        }
    }
}
