//! Parameters like any ROS 2 node's: the six rcl_interfaces services under the node's name
//! (`ros2 param list / get / set / describe / dump` use them) and `/parameter_events`, on
//! both backends. Every config field is declared with a descriptor, read-only where a change
//! needs a restart; the live ones (see `table`) take effect when set, and a set that is
//! refused answers `successful: false` with the reason.
mod table;
mod value;

use super::{Error, backend};
use crate::config::Config;
use crate::messages::rcl_interfaces::msg::{
    Parameter, ParameterDescriptor, ParameterEvent, ParameterValue, SetParametersResult,
};
use crate::messages::rcl_interfaces::srv::{
    DescribeParameters, GetParameterTypes, GetParameters, ListParameters, SetParameters,
    SetParametersAtomically,
};
use crate::sim::SimHandle;
use crate::topics::Qos;
use futures::executor::LocalSpawner;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use table::{Change, Refusal, Table};

/// `/parameter_events`, as rclcpp offers it: reliable, volatile, a deep history.
const EVENTS: Qos = Qos {
    depth: 1000,
    transient_local: false,
};

/// What parameter changes reach on the node's own thread: publisher rates to retime, and
/// how long a `~/wrench` acts.
#[derive(Clone)]
pub struct LiveSettings {
    /// (`ros.rates` field, Hz) not yet applied to the outputs.
    pub retimes: Rc<RefCell<Vec<(&'static str, f64)>>>,
    pub wrench_duration: Rc<Cell<f64>>,
}

impl LiveSettings {
    pub fn new(config: &Config) -> Self {
        Self {
            retimes: Default::default(),
            wrench_duration: Rc::new(Cell::new(config.ros.wrench_duration)),
        }
    }
}

/// Why a parameter set did not take; its text is the `reason` of the set's result.
#[derive(Debug, thiserror::Error)]
enum SetError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("parameter '{name}': {error}")]
    NotApplied {
        name: String,
        error: crate::sim::OperationError,
    },
}

struct Parameters {
    table: RefCell<Table>,
    /// The world the table describes: its generation number and config (not the generation
    /// itself, whose model would stay alive until the next parameter request).
    world: RefCell<(u64, Config)>,
    handle: SimHandle,
    live: LiveSettings,
    events: backend::Publisher<ParameterEvent>,
    node_name: String,
}

impl Parameters {
    /// After a world change, the table of the new world (robots spawned or deleted).
    fn follow_world(&self) {
        let now = self.handle.world();
        if now.number == self.world.borrow().0 {
            return;
        }
        let (_, old_config) = self.world.replace((now.number, now.config.clone()));
        let followed =
            self.table
                .borrow()
                .follow(&old_config, &now.config, now.model.opt().timestep);
        match followed {
            Ok(table) => *self.table.borrow_mut() = table,
            Err(e) => log::error!("parameters of world {}: {e}", now.number),
        }
    }

    /// All or none: every one is checked before any is applied.
    fn set_all(&self, parameters: &[Parameter]) -> Result<(), SetError> {
        let refused = parameters.iter().find_map(|parameter| {
            self.table
                .borrow()
                .check(&parameter.name, &parameter.value)
                .err()
        });
        match refused {
            Some(refusal) => Err(SetError::from(refusal)),
            None => parameters
                .iter()
                .try_for_each(|parameter| self.set(parameter)),
        }
    }

    /// Checks and applies one set; the stored value changes only when the change took.
    fn set(&self, parameter: &Parameter) -> Result<(), SetError> {
        let (change, kept) = self
            .table
            .borrow()
            .check(&parameter.name, &parameter.value)?;
        let applied = match change {
            Change::Speed(speed) => self.handle.set_speed(speed).map(drop),
            Change::Mode(mode) => self.handle.set_mode(mode).map(drop),
            Change::Gains { robot, gains } => self.handle.set_robot_gains(robot, gains).map(drop),
            Change::Rate(field, hz) => {
                self.live.retimes.borrow_mut().push((field, hz));
                Ok(())
            }
            Change::WrenchDuration(seconds) => {
                self.live.wrench_duration.set(seconds);
                Ok(())
            }
            Change::Nothing => Ok(()),
        };
        applied.map_err(|error| SetError::NotApplied {
            name: parameter.name.clone(),
            error,
        })?;
        log::info!("parameter {} set", parameter.name);
        self.table.borrow_mut().store(&parameter.name, kept.clone());
        let event = ParameterEvent {
            stamp: crate::topics::convert::time(self.handle.stats().sim_time),
            node: self.node_name.clone(),
            changed_parameters: vec![Parameter {
                name: parameter.name.clone(),
                value: kept,
            }],
            ..Default::default()
        };
        let _ = self.events.publish(&event);
        Ok(())
    }

    fn result(outcome: Result<(), SetError>) -> SetParametersResult {
        match outcome {
            Ok(()) => SetParametersResult {
                successful: true,
                reason: String::new(),
            },
            Err(e) => SetParametersResult {
                successful: false,
                reason: e.to_string(),
            },
        }
    }

    fn value(&self, name: &str) -> ParameterValue {
        self.table
            .borrow()
            .get(name)
            .map(|d| d.value.clone())
            .unwrap_or_default()
    }

    fn type_of(&self, name: &str) -> u8 {
        self.table
            .borrow()
            .get(name)
            .map_or(Default::default(), |d| d.value.type_)
    }

    fn descriptor(&self, name: &str) -> ParameterDescriptor {
        self.table
            .borrow()
            .get(name)
            .map(|d| d.descriptor.clone())
            .unwrap_or_else(|| ParameterDescriptor {
                name: name.to_string(),
                ..Default::default()
            })
    }
}

/// Serves `S` at `~/<name>` with `answer`.
fn serve<S: backend::ServiceType>(
    node: &mut backend::Node,
    spawner: &LocalSpawner,
    parameters: &Rc<Parameters>,
    name: &str,
    answer: impl Fn(&Parameters, &S::Request) -> S::Response + 'static,
) -> Result<(), Error> {
    let parameters = parameters.clone();
    super::serve::<S>(node, spawner, &format!("~/{name}"), move |request| {
        parameters.follow_world();
        answer(&parameters, &request)
    })
}

pub fn start(
    node: &mut backend::Node,
    spawner: &LocalSpawner,
    handle: &SimHandle,
    config: &Config,
    live: &LiveSettings,
) -> Result<(), Error> {
    let events = node.publisher::<ParameterEvent>("/parameter_events", EVENTS)?;
    let world = handle.world();
    let parameters = Rc::new(Parameters {
        table: RefCell::new(
            Table::new(config, world.model.opt().timestep)
                .map_err(|e| Error::from(e.to_string()))?,
        ),
        world: RefCell::new((world.number, world.config.clone())),
        handle: handle.clone(),
        live: live.clone(),
        events,
        node_name: node.fully_qualified_name(),
    });
    serve::<ListParameters::Service>(node, spawner, &parameters, "list_parameters", |p, r| {
        ListParameters::Response {
            result: p.table.borrow().list(&r.prefixes, r.depth),
        }
    })?;
    serve::<GetParameters::Service>(node, spawner, &parameters, "get_parameters", |p, r| {
        GetParameters::Response {
            values: r.names.iter().map(|n| p.value(n)).collect(),
        }
    })?;
    serve::<GetParameterTypes::Service>(
        node,
        spawner,
        &parameters,
        "get_parameter_types",
        |p, r| GetParameterTypes::Response {
            types: r.names.iter().map(|n| p.type_of(n)).collect(),
        },
    )?;
    serve::<DescribeParameters::Service>(
        node,
        spawner,
        &parameters,
        "describe_parameters",
        |p, r| DescribeParameters::Response {
            descriptors: r.names.iter().map(|n| p.descriptor(n)).collect(),
        },
    )?;
    serve::<SetParameters::Service>(node, spawner, &parameters, "set_parameters", |p, r| {
        SetParameters::Response {
            results: r
                .parameters
                .iter()
                .map(|parameter| Parameters::result(p.set(parameter)))
                .collect(),
        }
    })?;
    serve::<SetParametersAtomically::Service>(
        node,
        spawner,
        &parameters,
        "set_parameters_atomically",
        |p, r| SetParametersAtomically::Response {
            result: Parameters::result(p.set_all(&r.parameters)),
        },
    )?;
    Ok(())
}
