pub mod msg {
    use super::super::Message;
    use super::super::definition::{Definition, FieldType, collect_message};
    use super::super::std_msgs::msg::Header;
    use serde::{Deserialize, Serialize};

    super::super::structs! { "geometry_msgs", "msg";
        Vector3 { x: f64, y: f64, z: f64 }
        Point { x: f64, y: f64, z: f64 }
        Pose { position: Point, orientation: Quaternion }
        PoseStamped { header: Header, pose: Pose }
        Transform { translation: Vector3, rotation: Quaternion }
        TransformStamped { header: Header, child_frame_id: String, transform: Transform }
        Twist { linear: Vector3, angular: Vector3 }
        TwistStamped { header: Header, twist: Twist }
        Accel { linear: Vector3, angular: Vector3 }
        Wrench { force: Vector3, torque: Vector3 }
        WrenchStamped { header: Header, wrench: Wrench }
        PoseWithCovariance { pose: Pose, covariance: Covariance6 }
        TwistWithCovariance { twist: Twist, covariance: Covariance6 }
        TwistWithCovarianceStamped { header: Header, twist: TwistWithCovariance }
    }

    /// `geometry_msgs/Quaternion`, whose default is the identity (`w = 1`).
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    pub struct Quaternion {
        pub x: f64,
        pub y: f64,
        pub z: f64,
        pub w: f64,
    }

    impl Default for Quaternion {
        fn default() -> Self {
            Self {
                x: 0.0,
                y: 0.0,
                z: 0.0,
                w: 1.0,
            }
        }
    }

    impl Message for Quaternion {
        const PACKAGE: &'static str = "geometry_msgs";
        const KIND: &'static str = "msg";
        const NAME: &'static str = "Quaternion";
    }

    impl FieldType for Quaternion {
        fn field_type() -> String {
            "geometry_msgs/Quaternion".into()
        }
        fn collect(out: &mut Vec<Definition>) {
            collect_message(
                out,
                Self::field_type(),
                &["x", "y", "z", "w"]
                    .map(|axis| (f64::field_type(), axis, f64::collect as fn(&mut _))),
            );
        }
    }

    /// A row-major 6x6 covariance, `float64[36]`: a fixed array, so CDR gives it no length.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Covariance6(pub [f64; 36]);

    impl Default for Covariance6 {
        fn default() -> Self {
            Self([0.0; 36])
        }
    }

    impl FieldType for Covariance6 {
        fn field_type() -> String {
            <[f64; 36]>::field_type()
        }
    }

    impl Serialize for Covariance6 {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeTuple;
            let mut tuple = serializer.serialize_tuple(36)?;
            for value in &self.0 {
                tuple.serialize_element(value)?;
            }
            tuple.end()
        }
    }

    impl<'de> Deserialize<'de> for Covariance6 {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Values;
            impl<'de> serde::de::Visitor<'de> for Values {
                type Value = Covariance6;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("36 float64 values")
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<Covariance6, A::Error> {
                    let mut values = [0.0; 36];
                    for (i, value) in values.iter_mut().enumerate() {
                        *value = seq
                            .next_element()?
                            .ok_or_else(|| serde::de::Error::invalid_length(i, &self))?;
                    }
                    Ok(Covariance6(values))
                }
            }
            deserializer.deserialize_tuple(36, Values)
        }
    }
}
