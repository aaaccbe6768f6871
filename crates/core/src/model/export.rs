//! `--export-mjcf`: the compiled world, or one robot, as a standalone MJCF that MuJoCo's own
//! loader reads into the same model. Mesh, texture and height-field files the models name
//! are copied into a folder beside it (`<stem>_assets/`); meshes the bridge converted itself
//! (COLLADA, ASCII STL) are written into the file as vertices and faces. The gains the servo
//! rule set after compiling are written into the actuators. After writing, the file is
//! loaded back and compared with the bridge's model field by field (`Comparison`).
use super::{compile, gains, robot_spec};
use crate::config::Config;
use crate::error::InputError;
use mujoco_rs::prelude::*;
use std::cell::Cell;
use std::path::{Path, PathBuf};

/// Why an export failed; the text names the file or the robot.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("no robot '{0}' in the config; it has {1:?}")]
    NoRobot(String, Vec<String>),
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    #[error("MuJoCo cannot load the exported {path}: {reason}")]
    Reload { path: String, reason: String },
}

fn file_error(path: &Path, reason: impl std::fmt::Display) -> ExportError {
    ExportError::File {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

/// Where the asset files go, and how many went.
pub(super) struct AssetCopy {
    /// The folder the MJCF file is written in.
    dir: PathBuf,
    /// Their folder, relative to `dir`.
    folder: String,
    copied: Cell<usize>,
}

impl AssetCopy {
    fn new(out: &Path) -> Self {
        let dir = out
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let stem = out
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into());
        Self {
            dir,
            folder: format!("{stem}_assets"),
            copied: Cell::new(0),
        }
    }

    /// The folder the world spec's relative asset paths resolve against.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Copies the files `spec` (robot `robot`'s, not yet attached) names and points it at
    /// the copies, relative to the export's folder: its `meshdir` and `texturedir` are
    /// then empty and its own folder the export's.
    pub(super) fn take(&self, spec: &mut MjSpec, robot: &str) -> Result<(), InputError> {
        let base = PathBuf::from(spec.modelfiledir());
        let meshdir = base.join(spec.compiler().meshdir());
        let texturedir = base.join(spec.compiler().texturedir());
        let mut failed = None;
        let mut copy = |file: &str, under: &Path| -> Option<String> {
            if file.is_empty() || failed.is_some() {
                return None;
            }
            let source = under.join(file);
            let name = source
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let k = self.copied.get();
            let relative = format!("{}/{robot}_{k}_{name}", self.folder);
            let target = self.dir.join(&relative);
            let copied = std::fs::create_dir_all(self.dir.join(&self.folder))
                .and_then(|_| std::fs::copy(&source, &target));
            match copied {
                Ok(_) => {
                    self.copied.set(k + 1);
                    Some(relative)
                }
                Err(e) => {
                    failed = Some(format!("cannot copy {}: {e}", source.display()));
                    None
                }
            }
        };
        for mesh in spec.mesh_iter_mut() {
            if let Some(relative) = copy(mesh.file(), &meshdir) {
                mesh.set_file(&relative);
            }
        }
        for field in spec.hfield_iter_mut() {
            if let Some(relative) = copy(field.file(), &meshdir) {
                field.set_file(&relative);
            }
        }
        for texture in spec.texture_iter_mut() {
            if let Some(relative) = copy(texture.file(), &texturedir) {
                texture.set_file(&relative);
            }
        }
        if let Some(reason) = failed {
            return Err(InputError::new(robot, reason));
        }
        spec.compiler_mut().set_meshdir("");
        spec.compiler_mut().set_texturedir("");
        spec.set_modelfiledir(&format!("{}/", self.dir.display()));
        Ok(())
    }
}

/// Writes the actuator gains of `model` (where the servo rule set them after compiling)
/// into `spec`'s actuators of the same names.
fn gains_into(spec: &mut MjSpec, model: &MjModel, prefix: &str) {
    for actuator in spec.actuator_iter_mut() {
        let name = format!("{prefix}{}", actuator.name());
        if let Some(id) = model.name_to_id(MjtObjBase::mjOBJ_ACTUATOR, &name) {
            *actuator.gainprm_mut() = model.actuator_gainprm()[id];
            *actuator.biasprm_mut() = model.actuator_biasprm()[id];
        }
    }
}

// MuJoCo's XML writer prints 6 significant digits unless told otherwise; its library exports
// the setting (as its own tests use it), which 17 digits make exact for every double.
unsafe extern "C" {
    fn _mjPRIVATE__get_xml_precision() -> std::ffi::c_int;
    fn _mjPRIVATE__set_xml_precision(precision: std::ffi::c_int);
}

/// Full precision in what MuJoCo writes while it lives; the previous setting after.
struct FullPrecision(std::ffi::c_int);

impl FullPrecision {
    fn new() -> Self {
        // SAFETY: plain reads and writes of an int setting of the library; the export runs
        // before any other thread of this process writes XML.
        unsafe {
            let previous = _mjPRIVATE__get_xml_precision();
            _mjPRIVATE__set_xml_precision(17);
            Self(previous)
        }
    }
}

impl Drop for FullPrecision {
    fn drop(&mut self) {
        // SAFETY: as in `new`.
        unsafe { _mjPRIVATE__set_xml_precision(self.0) };
    }
}

/// Writes each body's compiled mass, inertia and inertial frame from `model` into `spec`,
/// saved as explicit `<inertial>` clauses: an attached robot's compiler settings
/// (`boundmass`, `inertiafromgeom`) are not written with the world's, and would be lost.
fn inertials_into(spec: &mut MjSpec, model: &MjModel) {
    let names: Vec<String> = spec.body_iter().map(|b| b.name().to_string()).collect();
    for name in names {
        let Some(id) = model.name_to_id(MjtObjBase::mjOBJ_BODY, &name) else {
            continue;
        };
        let Some(body) = spec.body_mut(&name) else {
            continue;
        };
        if id == 0 {
            continue;
        }
        body.set_mass(model.body_mass()[id]);
        *body.ipos_mut() = model.body_ipos()[id];
        *body.iquat_mut() = model.body_iquat()[id];
        *body.inertia_mut() = model.body_inertia()[id];
        // Unused (diagonal inertia in the inertial frame above).
        body.fullinertia_mut()[0] = f64::NAN;
        body.set_explicitinertial(true);
    }
}

/// The largest difference an export may show between the bridge's model and MuJoCo's load of
/// the file: what writing numbers as text may round (nothing, at full precision).
pub const TOLERANCE: f64 = 1e-9;

/// What was written, and how MuJoCo's load of it compares with the bridge's model.
pub struct Exported {
    pub file: PathBuf,
    pub assets: usize,
    pub comparison: Comparison,
}

/// The bridge's model against MuJoCo's load of the exported file.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// (size, ours, theirs) for every size compared.
    pub sizes: Vec<(&'static str, i64, i64)>,
    /// (field, largest difference) for every array compared: absolute for positions,
    /// rotations and axes, relative to the value for masses, inertias and gains.
    pub largest: Vec<(&'static str, f64)>,
}

impl Comparison {
    /// Whether every size is equal and every difference within `tolerance`.
    pub fn same(&self, tolerance: f64) -> bool {
        self.sizes.iter().all(|(_, a, b)| a == b)
            && self.largest.iter().all(|(_, d)| *d <= tolerance)
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let sizes: Vec<String> = self
            .sizes
            .iter()
            .map(|(name, a, b)| {
                if a == b {
                    format!("{name} {a}")
                } else {
                    format!("{name} {a} != {b}")
                }
            })
            .collect();
        let largest: Vec<String> = self
            .largest
            .iter()
            .map(|(name, d)| format!("{name} {d:.1e}"))
            .collect();
        write!(
            f,
            "sizes: {}; largest differences: {}",
            sizes.join(", "),
            largest.join(", ")
        )
    }
}

/// The largest difference between `a` and `b`, relative to the larger magnitude (at least
/// 1e-12) when `relative`.
fn largest<const N: usize>(a: &[[f64; N]], b: &[[f64; N]], relative: bool) -> f64 {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .map(|(x, y)| {
            let d = (x - y).abs();
            if relative {
                d / x.abs().max(y.abs()).max(1e-12)
            } else {
                d
            }
        })
        .fold(0.0, f64::max)
}

/// Compares two models: sizes, the inertial and kinematic arrays, and the body poses at
/// `qpos0` (forward kinematics of each).
pub fn compare(ours: &MjModel, theirs: &MjModel) -> Comparison {
    let (a, b) = (ours.ffi(), theirs.ffi());
    let sizes = vec![
        ("nq", a.nq, b.nq),
        ("nv", a.nv, b.nv),
        ("nu", a.nu, b.nu),
        ("nbody", a.nbody, b.nbody),
        ("njnt", a.njnt, b.njnt),
        ("ngeom", a.ngeom, b.ngeom),
        ("nsite", a.nsite, b.nsite),
        ("nmesh", a.nmesh, b.nmesh),
        ("nsensor", a.nsensor, b.nsensor),
        ("neq", a.neq, b.neq),
        ("nexclude", a.nexclude, b.nexclude),
        ("nkey", a.nkey, b.nkey),
    ];
    if sizes.iter().any(|(_, x, y)| x != y) {
        return Comparison {
            sizes,
            largest: Vec::new(),
        };
    }
    let scalar = |v: &[f64]| v.iter().map(|x| [*x]).collect::<Vec<[f64; 1]>>();
    let poses = |model: &MjModel| {
        let mut data = MjData::new(model);
        data.forward();
        (data.xpos().to_vec(), data.xquat().to_vec())
    };
    let ((xpos_a, xquat_a), (xpos_b, xquat_b)) = (poses(ours), poses(theirs));
    let largest = vec![
        (
            "body_mass",
            largest(&scalar(ours.body_mass()), &scalar(theirs.body_mass()), true),
        ),
        (
            "body_inertia",
            largest(ours.body_inertia(), theirs.body_inertia(), true),
        ),
        (
            "body_ipos",
            largest(ours.body_ipos(), theirs.body_ipos(), false),
        ),
        (
            "body_pos",
            largest(ours.body_pos(), theirs.body_pos(), false),
        ),
        (
            "body_quat",
            largest(ours.body_quat(), theirs.body_quat(), false),
        ),
        (
            "jnt_axis",
            largest(ours.jnt_axis(), theirs.jnt_axis(), false),
        ),
        (
            "jnt_range",
            largest(ours.jnt_range(), theirs.jnt_range(), false),
        ),
        (
            "qpos0",
            largest(&scalar(ours.qpos0()), &scalar(theirs.qpos0()), false),
        ),
        (
            "actuator_gainprm",
            largest(ours.actuator_gainprm(), theirs.actuator_gainprm(), true),
        ),
        (
            "actuator_biasprm",
            largest(ours.actuator_biasprm(), theirs.actuator_biasprm(), true),
        ),
        ("xpos at qpos0", largest(&xpos_a, &xpos_b, false)),
        ("xquat at qpos0", largest(&xquat_a, &xquat_b, false)),
    ];
    Comparison { sizes, largest }
}

/// Writes the world of `config` (or its robot `robot` alone) to `out`, with its asset files
/// beside it, and compares MuJoCo's load of it with the bridge's model.
pub fn export(config: &Config, out: &Path, robot: Option<&str>) -> Result<Exported, ExportError> {
    let assets = AssetCopy::new(out);
    let (model, spec) = match robot {
        None => {
            let (world, spec) = super::build_for_export(config, &assets)?;
            ((*world.model).clone(), spec)
        }
        Some(name) => {
            let index = config
                .robots
                .iter()
                .position(|r| r.name == name)
                .ok_or_else(|| {
                    ExportError::NoRobot(
                        name.to_string(),
                        config.robots.iter().map(|r| r.name.clone()).collect(),
                    )
                })?;
            robot_alone(config, index, &assets)?
        }
    };
    let mut spec = spec;
    gains_into(&mut spec, &model, "");
    inertials_into(&mut spec, &model);
    // MuJoCo writes what the spec last compiled to: compiled again, the gains are in it.
    compile(&mut spec).map_err(|e| file_error(out, e))?;
    {
        let _exact = FullPrecision::new();
        spec.save_xml(out).map_err(|e| file_error(out, e))?;
    }
    let path = out.display().to_string();
    let reloaded = MjModel::from_xml(out).map_err(|e| ExportError::Reload {
        path: path.clone(),
        reason: robot_spec::one_line(&e.to_string()),
    })?;
    Ok(Exported {
        file: out.to_path_buf(),
        assets: assets.copied.get(),
        comparison: compare(&model, &reloaded),
    })
}

/// Robot `index` of `config` as its own model: its file with its mounted cameras, its
/// assets copied, compiled, and the servo rule's gains set.
fn robot_alone(
    config: &Config,
    index: usize,
    assets: &AssetCopy,
) -> Result<(MjModel, MjSpec), ExportError> {
    super::init_mujoco();
    let mut loaded = robot_spec::load_robot(config, index)?;
    super::cameras::mount(
        config.robots[index].listed_cameras(),
        &mut loaded.spec,
        &config.origin,
        index,
    )?;
    assets.take(&mut loaded.spec, &config.robots[index].name)?;
    let mut model =
        compile(&mut loaded.spec).map_err(|e| InputError::new(&loaded.origin, e.to_string()))?;
    gains::apply(&mut model, "", &loaded.ruled_servos);
    Ok((model, loaded.spec))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(mass: f64) -> MjModel {
        super::super::init_mujoco();
        MjModel::from_xml_string(&format!(
            "<mujoco><worldbody><body><joint type='hinge'/><geom size='0.1' mass='{mass}'/></body></worldbody></mujoco>"
        ))
        .unwrap()
    }

    #[test]
    fn a_comparison_names_what_differs() {
        let same = compare(&model(1.0), &model(1.0));
        assert!(same.same(0.0), "{same}");
        let heavier = compare(&model(1.0), &model(1.5));
        assert!(!heavier.same(1e-9));
        let mass = heavier
            .largest
            .iter()
            .find(|(n, _)| *n == "body_mass")
            .unwrap()
            .1;
        assert!((mass - 0.5 / 1.5).abs() < 1e-12, "relative: {mass}");
        assert!(
            heavier.to_string().contains("body_mass 3.3e-1"),
            "{heavier}"
        );
    }
}
