import { Controller } from '@tsoa/runtime';
import type { ApiDeps } from '../deps.js';

export abstract class SvcController extends Controller {
  constructor(protected readonly deps: ApiDeps) {
    super();
  }
}
