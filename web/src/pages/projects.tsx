import { listProjects } from '../api/endpoints.js';
import { Link } from '../components/link.js';
import { Empty, Loaded } from '../components/states.js';
import { formatDateTime } from '../format.js';
import { useResource } from '../use-resource.js';

export function ProjectsPage() {
  const projects = useResource(() => listProjects(), []);
  return (
    <>
      <h1>Projects</h1>
      <Loaded resource={projects} label="Loading projects…">
        {({ projects: list }) =>
          list.length === 0 ? (
            <Empty>
              <p>No projects yet. Create one with an admin key:</p>
              <pre tabIndex={0}>
                <code>{`curl -X POST ${window.location.origin}/api/projects \\\n  -H 'Authorization: Bearer <admin key>' -H 'Content-Type: application/json' \\\n  -d '{"name":"my agent"}'`}</code>
              </pre>
              <p class="muted">
                Or run <code>npm run demo</code> for a project full of sample agent runs.
              </p>
            </Empty>
          ) : (
            <ul class="project-list" data-testid="project-list">
              {list.map((project) => (
                <li key={project.id} class="panel project-card">
                  <h2>
                    <Link href={`/p/${project.id}`} data-project-id={project.id}>
                      {project.name}
                    </Link>
                  </h2>
                  {project.description && <p>{project.description}</p>}
                  <p class="muted">
                    <code>{project.id}</code> · created {formatDateTime(project.created_at)}
                  </p>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </>
  );
}
