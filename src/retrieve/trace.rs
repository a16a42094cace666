//! `trace` (callers or callees of a named entity, to a depth) and `impact` (everything that
//! reaches it through calls, inheritance, implementation or imports): breadth-first walks over
//! the resolved edges, with the calls that could not be resolved said as such.

use super::payload::{GraphNode, ImpactPayload, Targeted, TracePayload};
use super::profile::Direction;
use super::target::{Target, find_target};
use super::{MAX_TRACE_DEPTH, Retriever};
use crate::error::KnowcodeError;
use crate::graph::EdgeKind;
use crate::load::LoadedGeneration;
use crate::load::freshness;

impl Retriever {
    /// `trace`: callers or callees to `depth` (≤ 5), with what could not be resolved.
    pub async fn trace(
        &self,
        target: &str,
        direction: Direction,
        depth: usize,
    ) -> Result<Targeted<TracePayload>, KnowcodeError> {
        validate_depth(depth)?;
        let generation = self.generation().await?;
        let entity = match find_target(&generation, target)? {
            Target::Entity(entity) => entity,
            Target::Ambiguous(candidates) => return Ok(Targeted::Ambiguous(candidates)),
        };
        let (reached, unresolved) = reach(
            &generation,
            &entity.id,
            &[EdgeKind::Calls],
            direction,
            depth,
        );
        let nodes = reached
            .iter()
            .map(|r| r.node(format!("{}:{}", r.edge.path, r.edge.line)))
            .collect();
        let mut payload = TracePayload {
            entity: entity.id.clone(),
            direction,
            depth,
            nodes,
            freshness: freshness::check(&generation),
            unresolved: Default::default(),
            unresolved_calls_with_this_name: None,
        };
        match direction {
            Direction::Callees => payload.unresolved = unresolved,
            Direction::Callers => {
                let maybe = generation.unresolved_calls_named(&entity.name);
                payload.unresolved_calls_with_this_name = (maybe > 0).then_some(maybe);
            }
        }
        Ok(Targeted::Found(payload))
    }

    /// What a change to an entity may break: everything that reaches it through calls,
    /// inheritance, implementation or imports, up to `depth` levels, with the files involved.
    pub async fn impact(
        &self,
        target: &str,
        depth: usize,
    ) -> Result<Targeted<ImpactPayload>, KnowcodeError> {
        validate_depth(depth)?;
        let generation = self.generation().await?;
        let entity = match find_target(&generation, target)? {
            Target::Entity(entity) => entity,
            Target::Ambiguous(candidates) => return Ok(Targeted::Ambiguous(candidates)),
        };
        let kinds = [
            EdgeKind::Calls,
            EdgeKind::Inherits,
            EdgeKind::Implements,
            EdgeKind::Imports,
        ];
        let (reached, _) = reach(&generation, &entity.id, &kinds, Direction::Callers, depth);
        let files = reached.iter().map(|r| r.edge.path.clone()).collect();
        let mut by_depth = vec![0usize; depth];
        for r in &reached {
            by_depth[r.depth - 1] += 1;
        }
        let nodes = reached
            .iter()
            .take(IMPACT_NODES)
            .map(|r| r.node(r.edge.kind.as_str().to_string()))
            .collect();
        Ok(Targeted::Found(ImpactPayload {
            entity: entity.id.clone(),
            depth,
            impacted: reached.len(),
            by_depth,
            files,
            nodes,
            truncated: reached.len() > IMPACT_NODES,
            freshness: freshness::check(&generation),
        }))
    }
}

fn validate_depth(depth: usize) -> Result<(), KnowcodeError> {
    if depth == 0 || depth > MAX_TRACE_DEPTH {
        return Err(KnowcodeError::invalid_argument(
            "depth",
            format!("must be between 1 and {MAX_TRACE_DEPTH}"),
        ));
    }
    Ok(())
}

/// Nodes listed in an `impact` payload (the count covers all of them).
const IMPACT_NODES: usize = 50;

/// An entity reached by a graph walk, at which depth and over which edge.
struct Reached<'g> {
    id: String,
    depth: usize,
    edge: &'g crate::graph::Edge,
}

impl Reached<'_> {
    /// The payload node, with how it was reached.
    fn node(&self, via: String) -> GraphNode {
        GraphNode {
            id: self.id.clone(),
            depth: self.depth,
            via,
        }
    }
}

/// Breadth-first walk from `start` along resolved edges of `kinds`: incoming ones for
/// callers (who depends on it), outgoing for callees. Also returns the names of unresolved
/// outgoing edges at the first level.
fn reach<'g>(
    generation: &'g LoadedGeneration,
    start: &str,
    kinds: &[EdgeKind],
    direction: Direction,
    depth: usize,
) -> (Vec<Reached<'g>>, std::collections::BTreeSet<String>) {
    let mut seen = std::collections::HashSet::from([start.to_string()]);
    let mut frontier = vec![start.to_string()];
    let mut reached = Vec::new();
    let mut unresolved = std::collections::BTreeSet::new();
    for level in 1..=depth {
        let mut next = Vec::new();
        for id in &frontier {
            for &kind in kinds {
                let edges: Vec<&crate::graph::Edge> = match direction {
                    Direction::Callees => generation.outgoing(id, kind).collect(),
                    Direction::Callers => generation.incoming(id, kind).collect(),
                };
                for edge in edges {
                    let other = match direction {
                        Direction::Callees => edge.target.clone(),
                        Direction::Callers => Some(edge.source.clone()),
                    };
                    let Some(other) = other else {
                        if level == 1 {
                            unresolved.insert(edge.target_name.clone());
                        }
                        continue;
                    };
                    if seen.insert(other.clone()) {
                        next.push(other.clone());
                        reached.push(Reached {
                            id: other,
                            depth: level,
                            edge,
                        });
                    }
                }
            }
        }
        frontier = next;
    }
    (reached, unresolved)
}
