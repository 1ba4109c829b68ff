import { useQueryClient } from '@tanstack/react-query';
import { Link, NavLink, Navigate, Outlet, Route, Routes, useNavigate, useParams } from 'react-router-dom';
import { ErrorNote } from './components/feedback';
import { ArtifactsPage } from './pages/artifacts';
import { AuditPage } from './pages/audit';
import { DeploymentPage } from './pages/deployment/page';
import { DeploymentsPage } from './pages/deployments';
import { DevicePage } from './pages/device/page';
import { MembersPage } from './pages/members';
import { DevicesPage } from './pages/devices';
import { GroupPage, GroupsAndChannelsPage } from './pages/groups';
import { PersonalTokensPage, ProjectTokensPage } from './pages/tokens';
import { useProject } from './project-access';
import { ProjectsPage } from './pages/projects';
import { SignInPage } from './pages/sign-in';
import { WebhooksPage } from './pages/webhooks';
import { FleetPage } from './pages/fleet';
import { CrashesPage, CrashGroupPage } from './pages/crashes';
import { VulnerabilitiesPage, VulnerabilityPage } from './pages/vulnerabilities';
import { signOut, useSession } from './session';
import { queryKeys } from './query-keys';

export function App() {
  const session = useSession();
  if (session.isLoading) return <p className="page muted" role="status">Loading…</p>;
  if (session.error) return <main className="page"><ErrorNote error={session.error} /></main>;
  if (!session.data) {
    return (
      <Routes>
        <Route path="*" element={<SignInPage />} />
      </Routes>
    );
  }
  return (
    <Routes>
      <Route element={<Shell email={session.data.user.email} />}>
        <Route index element={<ProjectsPage />} />
        <Route path="tokens" element={<PersonalTokensPage />} />
        <Route path="projects/:projectId" element={<ProjectShell />}>
          <Route index element={<Navigate to="deployments" replace />} />
          <Route path="devices" element={<DevicesPage />} />
          <Route path="devices/:deviceId" element={<DevicePage />} />
          <Route path="fleet" element={<FleetPage />} />
          <Route path="artifacts" element={<ArtifactsPage />} />
          <Route path="crashes" element={<CrashesPage />} />
          <Route path="crashes/:groupId" element={<CrashGroupPage />} />
          <Route path="vulnerabilities" element={<VulnerabilitiesPage />} />
          <Route path="vulnerabilities/:advisoryId" element={<VulnerabilityPage />} />
          <Route path="deployments" element={<DeploymentsPage />} />
          <Route path="deployments/:deploymentId" element={<DeploymentPage />} />
          <Route path="groups" element={<GroupsAndChannelsPage />} />
          <Route path="groups/:groupId" element={<GroupPage />} />
          <Route path="tokens" element={<ProjectTokensPage />} />
          <Route path="members" element={<MembersPage />} />
          <Route path="webhooks" element={<WebhooksPage />} />
          <Route path="audit" element={<AuditPage />} />
        </Route>
        <Route path="*" element={<p className="muted">No such page. <Link to="/">Back to the projects</Link></p>} />
      </Route>
    </Routes>
  );
}

function Shell({ email }: { email: string }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/" className="brand">
          OTA console
        </Link>
        <nav aria-label="Account">
          <NavLink to="/tokens">Personal tokens</NavLink>
          <span className="muted email" title={email}>
            {email}
          </span>
          <button
            type="button"
            onClick={async () => {
              const providerLogout = await signOut();
              // Signed in through the identity provider: end that session too, which comes back to the console.
              if (providerLogout) {
                window.location.assign(providerLogout);
                return;
              }
              void navigate('/');
              // The session first, so that the sign-in page replaces every page at once; then
              // whatever the signed-in pages had read.
              queryClient.setQueryData(queryKeys.session(), null);
              queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== queryKeys.session()[0] });
            }}
          >
            Sign out
          </button>
        </nav>
      </header>
      <main id="main" className="page">
        <Outlet />
      </main>
    </>
  );
}

const PROJECT_TABS = [
  ['deployments', 'Deployments'],
  ['devices', 'Devices'],
  ['fleet', 'Fleet'],
  ['artifacts', 'Artifacts'],
  ['crashes', 'Crashes'],
  ['vulnerabilities', 'Vulnerabilities'],
  ['groups', 'Groups and channels'],
  ['tokens', 'Tokens and keys'],
  ['members', 'Members'],
  ['webhooks', 'Webhooks'],
  ['audit', 'Audit'],
] as const;

function ProjectShell() {
  const { projectId = '' } = useParams();
  const project = useProject(projectId);
  return (
    <>
      <p className="crumbs">
        <Link to="/">Projects</Link> / <strong>{project.data?.name ?? '…'}</strong>
      </p>
      <ErrorNote error={project.error} />
      <nav className="tabs" aria-label="Project">
        {PROJECT_TABS.map(([path, label]) => (
          <NavLink key={path} to={`/projects/${projectId}/${path}`}>
            {label}
          </NavLink>
        ))}
      </nav>
      {project.data && <Outlet />}
    </>
  );
}
