import type { ValidationError } from 'class-validator';

export interface ValidationProblem {
  /** Dotted path of the field at fault: `messages[0].content`. */
  path: string;
  message: string;
}

/** Flattens class-validator's error tree into one message per failed field, naming the field. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  for (const error of errors) {
    const path = joinPath(parent, error.property);
    for (const text of Object.values(error.constraints ?? {})) {
      problems.push({ path, message: rewriteSubject(text, error.property, path) });
    }
    // A loop, not push(...spread): a body with 100,000 bad items would overflow the call stack.
    for (const problem of flattenValidationErrors(error.children ?? [], path)) problems.push(problem);
  }
  return problems;
}

function joinPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

/** class-validator messages start with the bare property name; give them the full path instead. */
function rewriteSubject(text: string, property: string, path: string): string {
  if (text.startsWith(`property ${property} `))
    return `${path}: unknown field (${text.slice(9 + property.length).trim()})`;
  if (text.startsWith(property) && /^[ [.]/.test(text.slice(property.length)))
    return path + text.slice(property.length);
  return `${path}: ${text}`;
}
