/**
 * A small mixed English / Chinese / Japanese knowledge base with queries and the pages each
 * should find, for the Brain's search tests and for `bench/brain-recall-bench.ts`, which
 * measures recall@k of the search options on it. Distractor pages share words with the right
 * ones on purpose (two pricing pages, two Tokyo pages, 价格 in several pages …).
 */
export interface CorpusPage {
  readonly reference: string;
  readonly title: string;
  readonly content: string;
  readonly tags: readonly string[];
}

export interface CorpusQuery {
  readonly query: string;
  readonly language: 'en' | 'zh' | 'ja' | 'mixed';
  /** The pages a good answer lists first (any order). */
  readonly relevant: readonly string[];
}

export const BRAIN_CORPUS: readonly CorpusPage[] = [
  { reference: 'vendor-pricing', title: 'Vendor pricing', tags: ['vendors', 'pricing'], content: 'Acme charges $4 per seat per month. Volume discounts start above 500 seats; the contract renews every January. Invoices go to finance@example.com.' },
  { reference: 'cloud-costs', title: 'Cloud hosting costs', tags: ['infrastructure', 'budget'], content: 'Our hosting bill is about $12,000 a month, mostly database instances and egress. Reserved instances would cut the price by a third.' },
  { reference: 'release-process', title: 'How we release', tags: ['engineering'], content: 'Releases are cut on Tuesdays. Tag the commit, wait for CI to pass, then promote the build to production. Rollbacks use the previous tag.' },
  { reference: 'oncall-rotation', title: 'On-call rotation', tags: ['engineering', 'operations'], content: 'Each engineer is on call for one week. Pages go to the phone through the alerting service; escalate to the team lead after 15 minutes.' },
  { reference: 'customer-acme', title: 'Customer: Acme Corp', tags: ['customers'], content: 'Acme Corp prefers email over calls. Their main contact is Dana Li, head of procurement. They renewed for two years in 2026.' },
  { reference: 'holiday-policy', title: 'Holiday policy', tags: ['hr'], content: 'Everyone gets 25 days of paid holiday a year plus public holidays. Unused days carry over until March.' },
  { reference: 'expense-reports', title: 'Expense reports', tags: ['finance'], content: 'Submit receipts within 30 days. Meals are reimbursed up to $60 a day when travelling; taxis need a receipt.' },
  { reference: 'database-migrations', title: 'Database migrations', tags: ['engineering', 'database'], content: 'Migrations run at start-up and must never be edited once merged. Add a new migration for every schema change and test it on PostgreSQL and SQLite.' },
  { reference: 'coffee-machine', title: 'Office coffee machine', tags: ['office'], content: 'The coffee machine on the second floor needs descaling every month. Beans are ordered from the roaster on Friday.' },
  { reference: 'security-keys', title: 'Security keys for staff', tags: ['security'], content: 'Every employee gets two hardware security keys. Lost keys must be reported to IT the same day so they can be revoked.' },

  { reference: 'supplier-price-zh', title: '供应商价格', tags: ['价格', '采购'], content: '华东供应商的报价是每吨三千二百元，运费另计。合同每年三月续签，付款方式为月结三十天。' },
  { reference: 'travel-reimbursement-zh', title: '差旅报销规定', tags: ['财务'], content: '出差的住宿标准为每晚五百元以内，机票须提前七天预订经济舱。报销单须在回来后十五个工作日内提交。' },
  { reference: 'shanghai-office-zh', title: '上海办公室', tags: ['办公室'], content: '上海办公室位于浦东新区，地铁二号线可到。前台电话在工作日九点到六点有人接听。' },
  { reference: 'product-launch-zh', title: '新产品发布计划', tags: ['市场'], content: '新产品计划在十月发布，发布会在北京举行。市场部负责邀请媒体，销售部准备价格表。' },
  { reference: 'customer-complaints-zh', title: '客户投诉处理流程', tags: ['客服'], content: '收到客户投诉后，客服须在二十四小时内回复，并在系统中登记。严重投诉要上报给部门经理。' },
  { reference: 'server-maintenance-zh', title: '服务器维护窗口', tags: ['运维'], content: '每周日凌晨两点到四点是服务器维护窗口，期间数据库可能短暂不可用。维护前一天发通知。' },
  { reference: 'employee-training-zh', title: '新员工培训', tags: ['人事'], content: '新员工入职第一周参加培训，内容包括公司制度、信息安全和产品介绍。培训结束后有考试。' },
  { reference: 'price-negotiation-zh', title: '价格谈判记录', tags: ['采购'], content: '与华南供应商谈判后，对方同意把单价降低百分之五，但要求预付百分之三十的货款。' },

  { reference: 'tokyo-office-ja', title: '東京オフィスの案内', tags: ['オフィス'], content: '東京オフィスは渋谷区にあります。会議室は三階で、予約は社内カレンダーから行ってください。' },
  { reference: 'tokyo-restaurants-ja', title: '東京のおすすめレストラン', tags: ['食事'], content: '接待には銀座の寿司屋が人気です。予算は一人一万円程度。予約は一週間前までに。' },
  { reference: 'remote-work-ja', title: 'リモートワークの規定', tags: ['人事'], content: '在宅勤務は週三日まで認められます。勤怠は毎日システムに入力し、コアタイムは十一時から十五時です。' },
  { reference: 'invoice-rules-ja', title: '請求書の発行ルール', tags: ['経理'], content: '請求書は毎月末日に締め、翌月五日までに発行します。支払期限は発行日から三十日です。' },
  { reference: 'security-incident-ja', title: 'セキュリティ事故の対応', tags: ['セキュリティ'], content: 'パスワードの漏洩などのセキュリティ事故が起きたら、すぐに情報システム部へ連絡してください。アカウントは一時停止されます。' },
  { reference: 'new-product-ja', title: '新製品の価格設定', tags: ['価格', '営業'], content: '新製品の価格は一台四万八千円に決まりました。大口の顧客には最大一割の値引きが可能です。' },
  { reference: 'osaka-branch-ja', title: '大阪支店', tags: ['オフィス'], content: '大阪支店は梅田駅から徒歩五分です。営業チームが常駐し、関西の顧客を担当しています。' },

  { reference: 'japan-vendor-mixed', title: 'Japanese vendor: 山田製作所', tags: ['vendors', 'japan'], content: 'Yamada Seisakusho (山田製作所) supplies the metal parts. Lead time is six weeks; 納期 is confirmed by email. Pricing in yen, updated every April.' },
  { reference: 'china-logistics-mixed', title: 'China logistics 物流', tags: ['logistics', '物流'], content: 'Shipments from Shenzhen go by sea to Rotterdam. 深圳发货，海运到鹿特丹，大约需要三十五天。Customs papers are handled by the forwarder.' },
  { reference: 'api-keys-mixed', title: 'API keys and secrets', tags: ['security', 'engineering'], content: 'Never commit API keys. Store secrets in the vault; rotate them every 90 days. 秘密情報はリポジトリに入れないこと。' },
];

export const BRAIN_QUERIES: readonly CorpusQuery[] = [
  { query: 'vendor pricing', language: 'en', relevant: ['vendor-pricing'] },
  { query: 'price per seat', language: 'en', relevant: ['vendor-pricing'] },
  { query: 'hosting bill', language: 'en', relevant: ['cloud-costs'] },
  { query: 'how do releases work', language: 'en', relevant: ['release-process'] },
  { query: 'who is on call', language: 'en', relevant: ['oncall-rotation'] },
  { query: 'Acme contact person', language: 'en', relevant: ['customer-acme'] },
  { query: 'paid holidays', language: 'en', relevant: ['holiday-policy'] },
  { query: 'meal reimbursement receipts', language: 'en', relevant: ['expense-reports'] },
  { query: 'schema migration', language: 'en', relevant: ['database-migrations'] },
  { query: 'lost security key', language: 'en', relevant: ['security-keys'] },

  { query: '供应商报价', language: 'zh', relevant: ['supplier-price-zh', 'price-negotiation-zh'] },
  { query: '出差住宿标准', language: 'zh', relevant: ['travel-reimbursement-zh'] },
  { query: '上海办公室在哪里', language: 'zh', relevant: ['shanghai-office-zh'] },
  { query: '发布会', language: 'zh', relevant: ['product-launch-zh'] },
  { query: '客户投诉', language: 'zh', relevant: ['customer-complaints-zh'] },
  { query: '服务器维护', language: 'zh', relevant: ['server-maintenance-zh'] },
  { query: '培训', language: 'zh', relevant: ['employee-training-zh'] },
  { query: '价格', language: 'zh', relevant: ['supplier-price-zh', 'price-negotiation-zh', 'product-launch-zh'] },
  { query: '单价谈判', language: 'zh', relevant: ['price-negotiation-zh'] },

  { query: '東京オフィス', language: 'ja', relevant: ['tokyo-office-ja'] },
  { query: '会議室の予約', language: 'ja', relevant: ['tokyo-office-ja'] },
  { query: '在宅勤務', language: 'ja', relevant: ['remote-work-ja'] },
  { query: '請求書', language: 'ja', relevant: ['invoice-rules-ja'] },
  { query: 'パスワード漏洩', language: 'ja', relevant: ['security-incident-ja'] },
  { query: '新製品の価格', language: 'ja', relevant: ['new-product-ja'] },
  { query: '寿司', language: 'ja', relevant: ['tokyo-restaurants-ja'] },
  { query: '梅田', language: 'ja', relevant: ['osaka-branch-ja'] },

  { query: '山田製作所 lead time', language: 'mixed', relevant: ['japan-vendor-mixed'] },
  { query: '海运 Rotterdam', language: 'mixed', relevant: ['china-logistics-mixed'] },
  { query: 'secrets 秘密情報', language: 'mixed', relevant: ['api-keys-mixed'] },
  { query: '納期', language: 'mixed', relevant: ['japan-vendor-mixed'] },

  // Short words whose bigrams also occur elsewhere (in titles, which weigh more).
  { query: 'パスワード', language: 'ja', relevant: ['security-incident-ja'] },
  { query: 'オフィス', language: 'ja', relevant: ['tokyo-office-ja', 'osaka-branch-ja'] },
  { query: 'コアタイム', language: 'ja', relevant: ['remote-work-ja'] },
  { query: '支払期限', language: 'ja', relevant: ['invoice-rules-ja'] },
  { query: '华东供应商', language: 'zh', relevant: ['supplier-price-zh'] },
  { query: '数据库', language: 'zh', relevant: ['server-maintenance-zh'] },
  { query: '付款方式', language: 'zh', relevant: ['supplier-price-zh'] },
  { query: 'descaling the coffee machine', language: 'en', relevant: ['coffee-machine'] },
  { query: 'rotate secrets every 90 days', language: 'en', relevant: ['api-keys-mixed'] },
  { query: '深圳 shipments', language: 'mixed', relevant: ['china-logistics-mixed'] },
];
