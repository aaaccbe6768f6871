//! The `.msg` text of each message, made from the struct that defines it: what MCAP files and
//! the Foxglove protocol carry as a `ros2msg` schema so that a reader with no ROS installed
//! can decode the CDR. The fields, their order and their types are the struct's, so the text
//! cannot drift from the bytes. Constants and comments are not part of the wire and are left
//! out.

/// A type that can be a field of a message.
pub trait FieldType {
    /// Its name in a `.msg` field: `float64`, `float64[9]`, `string[]`, `std_msgs/Header`.
    fn field_type() -> String;

    /// Adds the messages it is made of (itself, when it is one) to `out`, each once.
    fn collect(_out: &mut Vec<Definition>) {}
}

/// One message's `.msg` text under its name (`std_msgs/Header`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub text: String,
}

/// The full schema of message `T` as rosbag2 writes it: its own fields, then each message
/// it is made of after a line of `=` and `MSG: package/Name`.
pub fn ros2msg<T: FieldType>() -> String {
    let mut found = Vec::new();
    T::collect(&mut found);
    let mut schema = String::new();
    for (i, definition) in found.iter().enumerate() {
        if i > 0 {
            schema.push_str(&"=".repeat(80));
            schema.push_str("\nMSG: ");
            schema.push_str(&definition.name);
            schema.push('\n');
        }
        schema.push_str(&definition.text);
    }
    schema
}

/// A field of a message: its type's name, its own name, and how to collect the messages its
/// type is made of.
pub type Field<'a> = (String, &'a str, fn(&mut Vec<Definition>));

/// Adds the definition of message `name` with `fields`, unless `out` has it.
pub fn collect_message(out: &mut Vec<Definition>, name: String, fields: &[Field]) {
    if out.iter().any(|d| d.name == name) {
        return;
    }
    let text = fields
        .iter()
        .map(|(field_type, field, _)| format!("{field_type} {}\n", field.trim_end_matches('_')))
        .collect();
    out.push(Definition { name, text });
    for (_, _, nested) in fields {
        nested(out);
    }
}

macro_rules! primitives {
    ($($rust:ty => $ros:literal),* $(,)?) => { $(
        impl FieldType for $rust {
            fn field_type() -> String {
                $ros.to_string()
            }
        }
    )* };
}

primitives! {
    bool => "bool", u8 => "uint8", i8 => "int8", u16 => "uint16", i16 => "int16",
    u32 => "uint32", i32 => "int32", u64 => "uint64", i64 => "int64",
    f32 => "float32", f64 => "float64", String => "string",
}

impl<T: FieldType> FieldType for Vec<T> {
    fn field_type() -> String {
        format!("{}[]", T::field_type())
    }
    fn collect(out: &mut Vec<Definition>) {
        T::collect(out)
    }
}

impl<T: FieldType, const N: usize> FieldType for [T; N] {
    fn field_type() -> String {
        format!("{}[{N}]", T::field_type())
    }
    fn collect(out: &mut Vec<Definition>) {
        T::collect(out)
    }
}

#[cfg(test)]
mod tests {
    use super::ros2msg;
    use crate::{sensor_msgs, tf2_msgs, visualization_msgs};

    #[test]
    fn a_schema_lists_the_fields_then_each_nested_message_once() {
        let schema = ros2msg::<sensor_msgs::msg::JointState>();
        assert_eq!(
            schema,
            "std_msgs/Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\n\
             float64[] effort\n================================================================================\n\
             MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\
             ================================================================================\n\
             MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
        );
        let tf = ros2msg::<tf2_msgs::msg::TFMessage>();
        assert_eq!(tf.matches("MSG: std_msgs/Header").count(), 1, "{tf}");
        assert!(
            tf.starts_with("geometry_msgs/TransformStamped[] transforms\n"),
            "{tf}"
        );
    }

    #[test]
    fn a_renamed_field_keeps_its_ros_name_and_arrays_their_bounds() {
        let marker = ros2msg::<visualization_msgs::msg::Marker>();
        assert!(marker.contains("\nint32 type\n"), "{marker}");
        let imu = ros2msg::<sensor_msgs::msg::Imu>();
        assert!(imu.contains("float64[9] orientation_covariance\n"), "{imu}");
    }
}
