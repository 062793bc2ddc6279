//! Every port a use case may use, in one bundle grouped by the AWS service behind it. A
//! function fills in the ports its use cases call and leaves the others `()`; a use case's
//! bounds say which ports it needs, so a missing one is a compile error, not a runtime one.

use crate::capacity_port::CurrentCapacity;
use crate::deploy_ports::{Endpoints, ReviewStore, ScalingHistory};
use crate::metrics_port::DemandHistory;
use crate::ports::{ScalingTargets, StateStore};

/// The ports of one function (or of `explain` and the simulator, which have them all in memory).
pub struct Ports<'a, T = (), H = (), C = (), E = (), S = (), R = (), D = ()> {
    /// Application Auto Scaling: the scalable targets' bounds (`ScalingTargets`).
    pub targets: &'a T,
    /// Application Auto Scaling: policies and scaling activities (`ScalingHistory`).
    pub history: &'a H,
    /// SageMaker: desired and in-service counts (`CurrentCapacity`).
    pub capacity: &'a C,
    /// SageMaker: what serves behind an endpoint, and its tags (`Endpoints`).
    pub endpoints: &'a E,
    /// DynamoDB: the plan, target states and the decision log (`StateStore`).
    pub state: &'a S,
    /// DynamoDB: model identities and policy reviews (`ReviewStore`).
    pub reviews: &'a R,
    /// CloudWatch: demand history (`DemandHistory`).
    pub demand: &'a D,
}

impl<T, H, C, E, S, R, D> Clone for Ports<'_, T, H, C, E, S, R, D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, H, C, E, S, R, D> Copy for Ports<'_, T, H, C, E, S, R, D> {}

impl<'a, T: ScalingTargets, S: StateStore> Ports<'a, T, (), (), (), S, (), ()> {
    /// The two ports every reconcile needs; add the others with the `with_*` methods.
    pub fn new(targets: &'a T, state: &'a S) -> Self {
        Ports::from_parts((targets, &(), &(), &(), state, &(), &()))
    }
}

/// The seven ports as a tuple, in field order: each `with_*` swaps one and keeps the others
/// (Rust cannot change a generic parameter through `..self`).
type Parts<'a, T, H, C, E, S, R, D> = (&'a T, &'a H, &'a C, &'a E, &'a S, &'a R, &'a D);

impl<'a, T, H, C, E, S, R, D> Ports<'a, T, H, C, E, S, R, D> {
    fn parts(self) -> Parts<'a, T, H, C, E, S, R, D> {
        (
            self.targets,
            self.history,
            self.capacity,
            self.endpoints,
            self.state,
            self.reviews,
            self.demand,
        )
    }

    fn from_parts(parts: Parts<'a, T, H, C, E, S, R, D>) -> Self {
        let (targets, history, capacity, endpoints, state, reviews, demand) = parts;
        Ports {
            targets,
            history,
            capacity,
            endpoints,
            state,
            reviews,
            demand,
        }
    }

    pub fn with_history<H2: ScalingHistory>(
        self,
        history: &'a H2,
    ) -> Ports<'a, T, H2, C, E, S, R, D> {
        let (t, _, c, e, s, r, d) = self.parts();
        Ports::from_parts((t, history, c, e, s, r, d))
    }

    pub fn with_capacity<C2: CurrentCapacity>(
        self,
        capacity: &'a C2,
    ) -> Ports<'a, T, H, C2, E, S, R, D> {
        let (t, h, _, e, s, r, d) = self.parts();
        Ports::from_parts((t, h, capacity, e, s, r, d))
    }

    pub fn with_endpoints<E2: Endpoints>(
        self,
        endpoints: &'a E2,
    ) -> Ports<'a, T, H, C, E2, S, R, D> {
        let (t, h, c, _, s, r, d) = self.parts();
        Ports::from_parts((t, h, c, endpoints, s, r, d))
    }

    pub fn with_reviews<R2: ReviewStore>(self, reviews: &'a R2) -> Ports<'a, T, H, C, E, S, R2, D> {
        let (t, h, c, e, s, _, d) = self.parts();
        Ports::from_parts((t, h, c, e, s, reviews, d))
    }

    pub fn with_demand<D2: DemandHistory>(self, demand: &'a D2) -> Ports<'a, T, H, C, E, S, R, D2> {
        let (t, h, c, e, s, r, _) = self.parts();
        Ports::from_parts((t, h, c, e, s, r, demand))
    }
}
