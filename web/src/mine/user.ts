// The user the "My tools" pages act for: the console's own user. GETs
// name it with ?user_id= (withUser); a JSON body names it as user_id,
// since /wunder/user_tools/mcp and its tools route read the body's only.
import { identity } from '../api';

/** me is the user id the console shows. */
export function me(): string {
  return identity()?.userId || '';
}

/** withMe adds user_id to a request body. */
export function withMe<T extends object>(body: T): T & { user_id: string } {
  return { ...body, user_id: me() };
}
