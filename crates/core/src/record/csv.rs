//! The CSV layout of recordings (pure code, no I/O): a `time` column (`%.6f`), then one
//! column per qpos entry named after its joint (`name`, or `name[k]` for multi-DoF joints),
//! then the velocities as `name.vel` / `name.vel[k]`; values `%.8f`. Import matches columns
//! to joints by full name or by the robot's own name (without its prefix). A recording
//! that runs across a world change keeps the columns it began with: a joint that is gone
//! writes NaN, which playback takes as a gap.
use crate::model::RobotMap;
use mujoco_rs::prelude::*;
use std::fmt::Write;

/// Which qpos / qvel entries each column name stands for.
struct Columns {
    qpos: Vec<(String, usize)>,
    qvel: Vec<(String, usize)>,
}

fn joint_sizes(kind: MjtJoint) -> (usize, usize) {
    match kind {
        MjtJoint::mjJNT_FREE => (7, 6),
        MjtJoint::mjJNT_BALL => (4, 3),
        _ => (1, 1),
    }
}

fn columns(model: &MjModel) -> Columns {
    let mut qpos = Vec::new();
    let mut qvel = Vec::new();
    for j in 0..model.ffi().njnt.max(0) as usize {
        let name = model
            .id_to_name(MjtObjBase::mjOBJ_JOINT, j)
            .map(str::to_string)
            .unwrap_or_else(|| format!("joint_{j}"));
        let (nq, nv) = joint_sizes(model.jnt_type()[j]);
        let (qadr, dadr) = (
            model.jnt_qposadr()[j] as usize,
            model.jnt_dofadr()[j] as usize,
        );
        for k in 0..nq {
            qpos.push((
                if nq == 1 {
                    name.clone()
                } else {
                    format!("{name}[{k}]")
                },
                qadr + k,
            ));
        }
        for k in 0..nv {
            qvel.push((
                if nv == 1 {
                    format!("{name}.vel")
                } else {
                    format!("{name}.vel[{k}]")
                },
                dadr + k,
            ));
        }
    }
    Columns { qpos, qvel }
}

/// The value columns of a recording of `model`, after `time`: qpos, then qvel.
pub fn column_names(model: &MjModel) -> Vec<String> {
    let c = columns(model);
    c.qpos.into_iter().chain(c.qvel).map(|(n, _)| n).collect()
}

/// The header line (without newline) of a recording with these value columns.
pub fn header(names: &[String]) -> String {
    std::iter::once("time")
        .chain(names.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(",")
}

/// A recording's columns, begun in an earlier world, in the current one: where each value
/// column's joint is in this world's `[qpos.., qvel..]`, matched by name. A joint that is
/// gone writes NaN. Built off the physics thread; `fill` does not allocate.
#[derive(Debug)]
pub struct ColumnMap {
    nq: usize,
    sources: Box<[Option<usize>]>,
    row: Box<[f64]>,
}

impl ColumnMap {
    pub fn new(names: &[String], model: &MjModel) -> Self {
        let now = columns(model);
        let nq = model.ffi().nq.max(0) as usize;
        let index: std::collections::HashMap<&str, usize> = now
            .qpos
            .iter()
            .map(|(n, i)| (n.as_str(), *i))
            .chain(now.qvel.iter().map(|(n, i)| (n.as_str(), nq + i)))
            .collect();
        Self {
            nq,
            sources: names
                .iter()
                .map(|n| index.get(n.as_str()).copied())
                .collect(),
            row: vec![0.0; 1 + names.len()].into_boxed_slice(),
        }
    }

    /// How many columns this world no longer has.
    pub fn gone(&self) -> usize {
        self.sources.iter().filter(|s| s.is_none()).count()
    }

    /// The row `[time, columns..]` of this state.
    pub fn fill(&mut self, time: f64, qpos: &[f64], qvel: &[f64]) -> &[f64] {
        self.row[0] = time;
        for (cell, source) in self.row[1..].iter_mut().zip(self.sources.iter()) {
            *cell = match *source {
                Some(i) if i < self.nq => qpos.get(i).copied().unwrap_or(f64::NAN),
                Some(i) => qvel.get(i - self.nq).copied().unwrap_or(f64::NAN),
                None => f64::NAN,
            };
        }
        &self.row
    }
}

/// Appends one data line for a ring row `[time, qpos..., qvel...]`.
pub fn write_row(out: &mut String, row: &[f64]) {
    let _ = write!(out, "{:.6}", row[0]);
    for v in &row[1..] {
        let _ = write!(out, ",{v:.8}");
    }
    out.push('\n');
}

/// Rows to play back: times, and values for the matched qpos / qvel entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Playback {
    pub times: Vec<f64>,
    pub qpos_index: Vec<usize>,
    /// `times.len() * qpos_index.len()` values.
    pub qpos: Vec<f64>,
    pub qvel_index: Vec<usize>,
    pub qvel: Vec<f64>,
    /// One row per physics step, at its own time (MCAP step records), rather than rows
    /// interpolated at each step's time.
    pub per_step: bool,
}

/// Why a CSV trajectory cannot be played back; names the column or line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CsvError {
    #[error("the CSV file is empty")]
    Empty,
    #[error("the first column must be 'time'")]
    NoTime,
    #[error("column '{0}' matches no joint of the model")]
    UnknownColumn(String),
    #[error("column '{0}' matches joints of several robots; use the prefixed name")]
    AmbiguousColumn(String),
    #[error("column '{0}' appears twice")]
    DuplicateColumn(String),
    #[error("line {line}: {fields} fields, the header has {header}")]
    FieldCount {
        line: usize,
        fields: usize,
        header: usize,
    },
    #[error("line {line}: column '{column}': '{field}' is not a number")]
    NotANumber {
        line: usize,
        column: String,
        field: String,
    },
    #[error("line {line}: column '{column}': an infinite value (or a NaN time)")]
    NotFinite { line: usize, column: String },
    #[error("line {line}: time {time} does not increase")]
    TimeNotIncreasing { line: usize, time: f64 },
    #[error("the CSV file has a header but no rows")]
    NoRows,
}

impl CsvError {
    /// The line an error is on, when it is on one.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::FieldCount { line, .. }
            | Self::NotANumber { line, .. }
            | Self::NotFinite { line, .. }
            | Self::TimeNotIncreasing { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// Parses a CSV trajectory for `model`: columns name joints with or without their robot's
/// prefix. Unknown or ambiguous columns, bad numbers and non-increasing times are errors
/// naming the column or line. A last line without its line end that does not parse is a
/// row cut short (a recording whose process was killed while writing): it is left out.
pub fn parse(text: &str, model: &MjModel, robots: &[RobotMap]) -> Result<Playback, CsvError> {
    match parse_all(text, model, robots) {
        Err(e) if !text.ends_with('\n') && e.line() == Some(text.lines().count()) => {
            let cut = text.rfind('\n').map_or("", |end| &text[..=end]);
            parse_all(cut, model, robots)
        }
        parsed => parsed,
    }
}

fn parse_all(text: &str, model: &MjModel, robots: &[RobotMap]) -> Result<Playback, CsvError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or(CsvError::Empty)?;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    if names.first() != Some(&"time") {
        return Err(CsvError::NoTime);
    }
    let (mut playback, column_of) = header_columns(&names, model, robots)?;
    for (number, line) in lines {
        let values = row_values(number + 1, line, &names)?;
        if playback.times.last().is_some_and(|t| *t >= values[0]) {
            return Err(CsvError::TimeNotIncreasing {
                line: number + 1,
                time: values[0],
            });
        }
        add_row(&mut playback, &values, &column_of);
    }
    if playback.times.is_empty() {
        return Err(CsvError::NoRows);
    }
    Ok(playback)
}

/// Where each data column goes: (is a velocity, its slot among the row's qpos or qvel).
type ColumnOf = Vec<(bool, usize)>;

/// An empty playback of the header's columns, and where each column goes.
fn header_columns(
    names: &[&str],
    model: &MjModel,
    robots: &[RobotMap],
) -> Result<(Playback, ColumnOf), CsvError> {
    let known = columns(model);
    // Column name -> (is velocity, index). Short names are the full names without a prefix.
    let lookup = |column: &str| -> Result<(bool, usize), CsvError> {
        let mut found = Vec::new();
        for (is_vel, list) in [(false, &known.qpos), (true, &known.qvel)] {
            for (full, index) in list.iter() {
                let short_match = robots
                    .iter()
                    .any(|r| full.strip_prefix(&r.prefix) == Some(column));
                if full == column || short_match {
                    found.push((is_vel, *index));
                }
            }
        }
        match found.as_slice() {
            [one] => Ok(*one),
            [] => Err(CsvError::UnknownColumn(column.to_string())),
            _ => Err(CsvError::AmbiguousColumn(column.to_string())),
        }
    };
    let mut qpos_index = Vec::new();
    let mut qvel_index = Vec::new();
    let mut column_of = Vec::new();
    for name in &names[1..] {
        let (is_vel, index) = lookup(name)?;
        let list = if is_vel {
            &mut qvel_index
        } else {
            &mut qpos_index
        };
        if list.contains(&index) {
            return Err(CsvError::DuplicateColumn(name.to_string()));
        }
        list.push(index);
        column_of.push((is_vel, list.len() - 1));
    }
    let playback = Playback {
        times: Vec::new(),
        qpos_index,
        qpos: Vec::new(),
        qvel_index,
        qvel: Vec::new(),
        per_step: false,
    };
    Ok((playback, column_of))
}

/// Row `line`'s numbers, time first; NaN is a gap (a recording across a delete writes it):
/// that joint keeps its position at that time.
fn row_values(line: usize, text: &str, names: &[&str]) -> Result<Vec<f64>, CsvError> {
    let fields: Vec<&str> = text.split(',').map(str::trim).collect();
    if fields.len() != names.len() {
        return Err(CsvError::FieldCount {
            line,
            fields: fields.len(),
            header: names.len(),
        });
    }
    let mut values = Vec::with_capacity(fields.len());
    for (field, column) in fields.iter().zip(names) {
        let v: f64 = field.parse().map_err(|_| CsvError::NotANumber {
            line,
            column: column.to_string(),
            field: field.to_string(),
        })?;
        if v.is_infinite() || (v.is_nan() && values.is_empty()) {
            return Err(CsvError::NotFinite {
                line,
                column: column.to_string(),
            });
        }
        values.push(v);
    }
    Ok(values)
}

/// Appends a row of `values` (time first) to the playback.
fn add_row(playback: &mut Playback, values: &[f64], column_of: &ColumnOf) {
    let (nq, nv) = (playback.qpos_index.len(), playback.qvel_index.len());
    playback.times.push(values[0]);
    let base_q = playback.qpos.len();
    let base_v = playback.qvel.len();
    playback.qpos.resize(base_q + nq, 0.0);
    playback.qvel.resize(base_v + nv, 0.0);
    for (value, (is_vel, slot)) in values[1..].iter().zip(column_of) {
        if *is_vel {
            playback.qvel[base_v + slot] = *value;
        } else {
            playback.qpos[base_q + slot] = *value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> MjModel {
        MjModel::from_xml_string(
            "<mujoco><worldbody><body><joint name='a'/><geom size='.1'/></body></worldbody>\
             </mujoco>",
        )
        .unwrap()
    }

    #[test]
    fn a_last_row_cut_short_is_left_out_and_a_finished_file_is_taken_whole() {
        let model = model();
        let finished = "time,a\n0.0,0.5\n0.1,0.6\n";
        assert_eq!(parse(finished, &model, &[]).unwrap().times, [0.0, 0.1]);
        // Killed while writing the third row: a field, or a number, is missing.
        for torn in [
            "time,a\n0.0,0.5\n0.1,0.6\n0.2",
            "time,a\n0.0,0.5\n0.1,0.6\n0.2,",
        ] {
            let playback = parse(torn, &model, &[]).unwrap();
            assert_eq!(playback.times, [0.0, 0.1], "{torn:?}");
        }
        // A bad line that the file goes on after is an error, as before.
        assert!(matches!(
            parse("time,a\n0.0,x\n0.1,0.6\n", &model, &[]),
            Err(CsvError::NotANumber { line: 2, .. })
        ));
    }
}
