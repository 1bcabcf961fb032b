import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';

type Lookup = (target: Function, schema: string | undefined, always: boolean, strictGroups: boolean, groups?: string[]) => ValidationMetadata[];
type Grouping = (metadata: ValidationMetadata[]) => Record<string, ValidationMetadata[]>;

let installed = false;

/**
 * class-validator looks a class's rules up again for every object it validates, nested ones
 * included: it filters the rules of every decorated class, walks them all for inheritance, and
 * groups the result by property, which made rule lookup a third of a request's validation time.
 * A class's rules are fixed once its module has loaded (decorators run at class definition), so
 * the lookups of ungrouped validation (the only kind Gantry runs) are cached per class; the
 * results are only read by class-validator. Idempotent.
 */
export function cacheValidationRules(): void {
  if (installed) return;
  installed = true;
  const storage = getMetadataStorage() as unknown as { getTargetValidationMetadatas: Lookup; groupByPropertyName: Grouping };
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  // By class, then by schema name (nested objects are looked up with their parent class's name).
  const rules = new Map<Function, Map<string | undefined, ValidationMetadata[]>>();
  const grouped = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();

  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (always || strictGroups || (groups && groups.length > 0)) return lookup(target, schema, always, strictGroups, groups);
    let bySchema = rules.get(target);
    if (bySchema === undefined) {
      bySchema = new Map();
      rules.set(target, bySchema);
    }
    let found = bySchema.get(schema);
    if (found === undefined) {
      found = lookup(target, schema, always, strictGroups, groups);
      bySchema.set(schema, found);
    }
    return found;
  };
  storage.groupByPropertyName = (metadata) => {
    let found = grouped.get(metadata);
    if (found === undefined) {
      found = group(metadata);
      grouped.set(metadata, found);
    }
    return found;
  };
}
