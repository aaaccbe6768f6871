//! What every PointCloud2 the node sends shares: float32 fields packed in order, little
//! endian, the header of the frame it shows; the points are the caller's.
use crate::messages::sensor_msgs::msg::{PointCloud2, PointField};

/// Starts `cloud` for points of float32 `fields` at `time` in `frame_id`: the header and
/// fields set (once), the data emptied for the points to come.
pub fn begin(cloud: &mut PointCloud2, time: f64, frame_id: &str, fields: &[&str]) {
    cloud.header.stamp = crate::convert::time(time);
    if cloud.header.frame_id != frame_id {
        cloud.header.frame_id = frame_id.to_string();
    }
    if cloud.fields.len() != fields.len() {
        cloud.fields = fields
            .iter()
            .enumerate()
            .map(|(i, name)| PointField {
                name: name.to_string(),
                offset: 4 * i as u32,
                datatype: PointField::FLOAT32,
                count: 1,
            })
            .collect();
    }
    cloud.data.clear();
}

/// Ends `cloud` as `width` x `height` points of the fields `begin` set; `dense`: no point
/// is NaN.
pub fn finish(cloud: &mut PointCloud2, width: usize, height: usize, dense: bool) {
    let point_step = 4 * cloud.fields.len() as u32;
    cloud.height = height as u32;
    cloud.width = width as u32;
    cloud.is_bigendian = false;
    cloud.point_step = point_step;
    cloud.row_step = point_step * width as u32;
    cloud.is_dense = dense;
}
