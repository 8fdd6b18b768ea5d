// `GET /builds/bazel/:invocationId`: where Bazel's own link line leads. Bazel prints
// `<--bes_results_url><invocation ID>` at the start and end of a build; with
// `--bes_results_url=<server>/builds/bazel/` that link redirects to the build's page,
// `/builds/<build ID>`. The build ID is a function of the invocation ID (src/bes/
// bep-build.ts), so no lookup is needed and nothing about the build is revealed here.

import { BadRequestError } from '../errors/domain.js';
import { buildIdFromInvocation } from '../bes/bep-build.js';
import type { FacePlugin } from './context.js';
import { PROBLEM_RESPONSES } from './api/schemas.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const besLinksPlugin: FacePlugin = async (app) => {
  app.get<{ Params: { invocationId: string } }>(
    '/builds/bazel/:invocationId',
    {
      schema: {
        summary: "Bazel's link to a build",
        description: 'Redirects (302) to /builds/{buildId} of the build a Bazel invocation was stored as; point Bazel at it with --bes_results_url=<server>/builds/bazel/. Needs no credentials: the build ID follows from the invocation ID.',
        tags: ['builds'],
        security: [],
        params: { type: 'object', properties: { invocationId: { type: 'string', description: 'Bazel invocation ID (a UUID)' } }, required: ['invocationId'] },
        response: { 302: { type: 'null', description: 'Location: /builds/{buildId}' }, ...PROBLEM_RESPONSES([400]) },
      },
    },
    async (request, reply) => {
      const { invocationId } = request.params;
      if (!UUID.test(invocationId)) throw new BadRequestError(`Not a Bazel invocation ID (a UUID): ${JSON.stringify(invocationId)}`);
      return reply.redirect(`/builds/${buildIdFromInvocation(invocationId)}`, 302);
    },
  );
};
