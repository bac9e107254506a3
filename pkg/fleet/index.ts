// The fleet's read model: what runs where, with which overrides, and how healthy, read from a hub with
// the user's own credentials. `flotilla status` and `flotilla ui` are its shells. Imports pkg/engine,
// pkg/kube and api/ (and pure helpers of pkg/controller); none of them imports it.
export { Fleet, fleetFor, type FleetOptions, type TemplateQuery } from './fleet.js';
export { HubReader, type HubReaderOptions, type HubSnapshot } from './hub.js';
export { clusterFacts } from './clusters.js';
export { placementMatrix, templateRows, rowMatches, cellMatches } from './matrix.js';
export { policyFacts } from './policies.js';
export { templateDetail, type DetailInput } from './detail.js';
export { recentEvents, MAX_EVENTS } from './events.js';
export { fieldChanges } from './field-diff.js';
export { conflictWriter, describeRef } from './rows.js';
export {
  CELL_STATES,
  STATE_FILTERS,
  type CapacityFact,
  type CellState,
  type ClusterDecision,
  type ClusterFact,
  type EventFact,
  type EvictionFact,
  type FieldChange,
  type LeaseFact,
  type MatrixFilter,
  type ObjectRef,
  type PlacementCell,
  type PlacementMatrix,
  type PolicyFact,
  type PolicyRef,
  type StateFilter,
  type TaintFact,
  type TemplateDetail,
  type TemplateRow,
} from './types.js';
