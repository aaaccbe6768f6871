//! The QoS profiles the node uses, as plain values each backend maps to its own. All are
//! reliable (a reliable writer also serves best-effort readers) and keep the last `depth`
//! samples; latched ones are transient local, so late subscribers get the last sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Qos {
    pub depth: usize,
    pub transient_local: bool,
}

impl Qos {
    /// State and sensor topics (REP-2003). The deep history lets a subscriber that stalls
    /// for a moment (a Python garbage collection) still get every message of a 1 kHz topic.
    pub const STATE: Qos = Qos {
        depth: 100,
        transient_local: false,
    };
    /// `/tf_static`, `robot_description`, markers: the last sample, kept for late joiners.
    pub const LATCHED: Qos = Qos {
        depth: 1,
        transient_local: true,
    };
    /// Camera images (a megabyte each): a short history, so a slow reader costs no memory.
    pub const IMAGES: Qos = Qos {
        depth: 2,
        transient_local: false,
    };
    /// Command topics and services: the ROS default profile.
    pub const DEFAULT: Qos = Qos {
        depth: 10,
        transient_local: false,
    };
    /// Service servers: a burst of requests (many clients at once) waits in the queue
    /// instead of being dropped by a full one; every request gets its answer.
    pub const SERVICES: Qos = Qos {
        depth: 100,
        transient_local: false,
    };
    /// `/rosout`, as rcl gives it: latched with a deep history.
    pub const ROSOUT: Qos = Qos {
        depth: 1000,
        transient_local: true,
    };
}
