// Every path the fixture Source serves, in one place, for the server and for tests.

export const PATHS = {
  home: '/',
  linkHeaderPage: '/linked/article.html',
  robots: '/robots.txt',
  plainSitemap: '/sitemap.xml',
  wellKnown: '/.well-known/resourcesync',
  /** The Source Description is always here too; `up` links point here when the well-known route is off. */
  sourceDescription: '/source-description.xml',
  about: '/about.html',
  hub: '/hub',
  slow: '/slow',
  slowBody: '/slow-body',
  redirectLoop: '/redirect-loop/a',
  /** 301 to the dataset1 Capability List. */
  moved: '/moved/capabilitylist.xml',
  /** Two hops, then the dataset1 Capability List. */
  redirectChain: '/redirect-chain',

  dataset1: {
    about: '/dataset1/about.html',
    capabilityList: '/dataset1/capabilitylist.xml',
    resourceList: '/dataset1/resourcelist.xml',
    /** The same Resource List, gzipped (as sitemaps often are), not advertised anywhere. */
    resourceListGzip: '/dataset1/resourcelist.xml.gz',
    resourceDump: '/dataset1/resourcedump.xml',
    resourceDumpPackage: (part: number) => `/dataset1/resourcedump/part${part}.zip`,
    resourceDumpManifest: (part: number) => `/dataset1/resourcedump/part${part}-manifest.xml`,
    changeListIndex: '/dataset1/changelist-index.xml',
    changeList: (n: number) => `/dataset1/changelists/${n}.xml`,
    changeDump: '/dataset1/changedump.xml',
    changeDumpPackage: (n: number) => `/dataset1/changedump/${n}.zip`,
    changeDumpManifest: (n: number) => `/dataset1/changedump/${n}-manifest.xml`,
    /** A Resource Dump Index: one child Resource Dump per package (the Capability List names it with `dumpIndexes`). */
    resourceDumpIndex: '/dataset1/resourcedump-index.xml',
    resourceDumpChild: (part: number) => `/dataset1/resourcedump-${part}.xml`,
    /** A Change Dump Index: one child Change Dump per two packages (named by the Capability List with `dumpIndexes`). */
    changeDumpIndex: '/dataset1/changedump-index.xml',
    changeDumpChild: (n: number) => `/dataset1/changedump-${n}.xml`,
    /** The change-notification channel (WebSub topic). */
    notifications: '/dataset1/notifications',
  },

  /** A Resource Dump with one hostile package (hostile-dump.ts), linked from nowhere. */
  hostileDump: {
    resourceDump: '/hostile-dump/resourcedump.xml',
    package: '/hostile-dump/package.zip',
    /** A Capability List that offers only the hostile Resource Dump, for mirroring it. */
    capabilityList: '/hostile-dump/capabilitylist.xml',
  },

  dataset2: {
    about: '/dataset2/about.html',
    capabilityList: '/dataset2/capabilitylist.xml',
    resourceListIndex: '/dataset2/resourcelist-index.xml',
    resourceListPart: (part: number) => `/dataset2/resourcelist-${part}.xml`,
    resource: (id: number) => `/dataset2/res/${id}`,
  },

  broken: {
    junkNamespace: '/broken/junk-namespace.xml',
    doctype: '/broken/doctype.xml',
    truncated: '/broken/truncated.xml',
    htmlAsXml: '/broken/html-as-xml.xml',
    noContentType: '/broken/no-content-type.xml',
    wrongContentType: '/broken/wrong-content-type.xml',
    changeListOutOfOrder: '/broken/changelist-out-of-order.xml',
    capabilityListWithoutUp: '/broken/capabilitylist-no-up.xml',
    /** A Resource List part with an `index` link but no `up` link. */
    orphanPart: '/broken/orphan-part.xml',
    /** A Resource List Index whose one part is a Change List. */
    mixedIndex: '/broken/mixed-index.xml',
    notXml: '/broken/not-xml.txt',
    empty: '/broken/empty.xml',
  },
} as const;
