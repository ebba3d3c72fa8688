/** Payments, commerce, CRM, support desks, accounting and signatures. */
import { bool, int, list, num, obj, oneOf, str, type NamespaceSpec } from './spec.ts'

const customer = { 'customer_id!': str('Customer id, cus_...') }
export const stripe: NamespaceSpec = {
  ns: 'stripe',
  product: 'Stripe',
  tags: ['payments', 'billing'],
  writes: 'external',
  resources: [
    {
      name: 'customer',
      ops: ['list', 'get', 'create', 'update', 'delete', 'search'],
      id: customer,
      fields: { 'email!': str('Email.'), name: str('Name.'), metadata: obj('Metadata.') },
      filters: { email: str('Email.') },
    },
    {
      name: 'payment_intent',
      ops: ['list', 'get', 'create'],
      id: { 'payment_intent_id!': str('pi_...') },
      fields: { 'amount!': int('Amount in the smallest currency unit.'), 'currency!': str('ISO currency.'), customer: str('Customer.') },
      filters: { customer: str('Customer.') },
      about: 'A payment intent tracks one payment from creation to success.',
    },
    {
      name: 'invoice',
      ops: ['list', 'get', 'create'],
      id: { 'invoice_id!': str('in_...') },
      fields: {
        'customer!': str('Customer.'),
        collection_method: oneOf(['charge_automatically', 'send_invoice'], 'How it is paid.'),
        days_until_due: int('Days.'),
      },
      filters: { customer: str('Customer.'), status: oneOf(['draft', 'open', 'paid', 'void', 'uncollectible'], 'Status.') },
    },
    {
      name: 'subscription',
      ops: ['list', 'get', 'create', 'update'],
      id: { 'subscription_id!': str('sub_...') },
      fields: { 'customer!': str('Customer.'), 'price!': str('Price id.'), quantity: int('Seats.'), trial_days: int('Trial.') },
      filters: { customer: str('Customer.'), status: str('Status.') },
    },
    {
      name: 'product',
      ops: ['list', 'create'],
      id: { 'product_id!': str('prod_...') },
      fields: { 'name!': str('Name.'), description: str('Description.') },
    },
    {
      name: 'price',
      ops: ['list', 'create'],
      id: { 'price_id!': str('price_...') },
      fields: {
        'product!': str('Product.'),
        'unit_amount!': int('Amount.'),
        'currency!': str('Currency.'),
        interval: oneOf(['month', 'year'], 'Billing period for recurring prices.'),
      },
    },
    {
      name: 'coupon',
      ops: ['list', 'create', 'delete'],
      id: { 'coupon_id!': str('Coupon id.') },
      fields: { percent_off: num('Percent.'), amount_off: int('Amount.'), duration: oneOf(['once', 'repeating', 'forever'], 'Duration.') },
    },
  ],
  tools: [
    {
      name: 'create_refund',
      description: 'Refund a charge or payment intent, fully or partly.',
      params: {
        'payment_intent!': str('Payment intent.'),
        amount: int('Amount; all if unset.'),
        reason: oneOf(['duplicate', 'fraudulent', 'requested_by_customer'], 'Reason.'),
      },
    },
    {
      name: 'list_refunds',
      description: 'List refunds, optionally of one payment.',
      params: { payment_intent: str('Payment intent.') },
      sideEffect: 'none',
    },
    {
      name: 'cancel_subscription',
      description: 'Cancel a subscription now or at the end of the billing period.',
      params: { 'subscription_id!': str('Subscription.'), at_period_end: bool('Wait for the period to end.') },
    },
    { name: 'finalize_invoice', description: 'Finalize a draft invoice so it can be paid.', params: { 'invoice_id!': str('Invoice.') } },
    { name: 'send_invoice', description: 'Email an invoice to the customer.', params: { 'invoice_id!': str('Invoice.') } },
    { name: 'void_invoice', description: 'Void an open invoice.', params: { 'invoice_id!': str('Invoice.') } },
    { name: 'get_balance', description: 'The Stripe account balance: available and pending funds.', params: {}, sideEffect: 'none' },
    {
      name: 'list_payouts',
      description: 'Payouts from Stripe to your bank account.',
      params: { status: oneOf(['paid', 'pending', 'failed'], 'Status.') },
      sideEffect: 'none',
    },
    {
      name: 'list_disputes',
      description: 'Chargebacks and disputes customers opened with their bank.',
      params: { status: str('Status.') },
      sideEffect: 'none',
    },
    {
      name: 'create_payment_link',
      description: 'Create a shareable checkout link for a price.',
      params: { 'price!': str('Price.'), quantity: int('Quantity.') },
    },
    {
      name: 'create_checkout_session',
      description: 'Start a hosted Checkout session for a customer to pay.',
      params: {
        'line_items!': list('Prices and quantities.', 'object'),
        'success_url!': str('URL.'),
        mode: oneOf(['payment', 'subscription'], 'Mode.'),
      },
    },
    {
      name: 'list_balance_transactions',
      description: 'Every movement of money in the account: charges, refunds, fees, payouts.',
      params: { type: str('Type.'), created_after: str('ISO.') },
      sideEffect: 'none',
    },
  ],
}

const store = {}
export const shopify: NamespaceSpec = {
  ns: 'shopify',
  product: 'Shopify',
  tags: ['ecommerce', 'store'],
  writes: 'external',
  resources: [
    {
      name: 'product',
      ops: ['list', 'get', 'create', 'update', 'delete'],
      id: { 'product_id!': int('Product id.') },
      fields: {
        'title!': str('Title.'),
        body_html: str('Description.'),
        vendor: str('Vendor.'),
        price: str('Price.'),
        tags: list('Tags.'),
      },
      filters: { ...store, collection_id: int('Collection.'), status: oneOf(['active', 'draft', 'archived'], 'Status.') },
    },
    {
      name: 'order',
      ops: ['list', 'get', 'update'],
      id: { 'order_id!': int('Order id.') },
      fields: { note: str('Note.'), tags: list('Tags.'), email: str('Customer email.') },
      filters: {
        status: oneOf(['open', 'closed', 'cancelled', 'any'], 'Status.'),
        financial_status: str('paid, refunded...'),
        fulfillment_status: str('shipped, unfulfilled...'),
      },
    },
    {
      name: 'customer',
      ops: ['list', 'get', 'create', 'search'],
      id: { 'customer_id!': int('Customer id.') },
      fields: { 'email!': str('Email.'), first_name: str('First name.'), last_name: str('Last name.') },
    },
    {
      name: 'collection',
      ops: ['list', 'create'],
      id: { 'collection_id!': int('Collection id.') },
      fields: { 'title!': str('Title.'), rules: list('Automatic rules.', 'object') },
    },
    {
      name: 'discount_code',
      ops: ['list', 'create'],
      id: { 'code!': str('Code.') },
      fields: {
        'code!': str('Code customers type.'),
        'value!': str('Percentage or amount.'),
        starts_at: str('ISO.'),
        ends_at: str('ISO.'),
      },
    },
  ],
  tools: [
    {
      name: 'cancel_order',
      description: 'Cancel a Shopify order, optionally refunding and restocking it.',
      params: { 'order_id!': int('Order.'), refund: bool('Refund.'), restock: bool('Restock.'), reason: str('Reason.') },
    },
    {
      name: 'refund_order',
      description: 'Refund line items or shipping of a Shopify order.',
      params: { 'order_id!': int('Order.'), line_items: list('Items and quantities.', 'object'), shipping: bool('Refund shipping.') },
    },
    {
      name: 'create_fulfillment',
      description: "Mark an order's items shipped, with a tracking number.",
      params: {
        'order_id!': int('Order.'),
        tracking_number: str('Tracking.'),
        carrier: str('Carrier.'),
        notify_customer: bool('Email the customer.'),
      },
    },
    {
      name: 'adjust_inventory',
      description: 'Change the stock level of a product variant at a location.',
      params: { 'inventory_item_id!': int('Item.'), 'location_id!': int('Location.'), 'delta!': int('Change, + or -.') },
    },
    {
      name: 'get_inventory_levels',
      description: 'Stock levels of products per location.',
      params: { inventory_item_ids: list('Items.', 'integer'), location_id: int('Location.') },
      sideEffect: 'none',
    },
    {
      name: 'get_sales_report',
      description: 'Store sales by day: orders, gross sales, returns, net sales.',
      params: { 'since!': str('ISO.'), until: str('ISO.') },
      sideEffect: 'none',
    },
  ],
}

const sobject = { 'object!': oneOf(['Account', 'Contact', 'Lead', 'Opportunity', 'Case'], 'Salesforce object type.') }
export const salesforce: NamespaceSpec = {
  ns: 'salesforce',
  product: 'Salesforce',
  tags: ['crm', 'sales'],
  writes: 'external',
  resources: [
    {
      name: 'record',
      ops: ['get', 'create', 'update', 'delete'],
      parent: sobject,
      id: { 'record_id!': str('Record id.') },
      fields: { 'fields!': obj('Field values.') },
    },
    { name: 'report', ops: ['list', 'get'], id: { 'report_id!': str('Report id.') } },
  ],
  tools: [
    {
      name: 'soql_query',
      description: "Run a SOQL query, e.g. SELECT Name FROM Account WHERE Industry = 'Retail'.",
      params: { 'soql!': str('SOQL.') },
      sideEffect: 'none',
    },
    {
      name: 'sosl_search',
      description: 'Search text across Salesforce objects with SOSL.',
      params: { 'search!': str('SOSL.') },
      sideEffect: 'none',
    },
    {
      name: 'describe_object',
      description: 'Fields, types and picklist values of a Salesforce object.',
      params: sobject,
      sideEffect: 'none',
    },
    {
      name: 'convert_lead',
      description: 'Convert a lead into an account, contact and optionally an opportunity.',
      params: { 'lead_id!': str('Lead.'), create_opportunity: bool('Also an opportunity.') },
    },
    {
      name: 'run_report',
      description: 'Run a Salesforce report and return its rows and totals.',
      params: { 'report_id!': str('Report.'), filters: list('Extra filters.', 'object') },
      sideEffect: 'none',
    },
    {
      name: 'log_activity',
      description: 'Log a call, meeting or email as an activity on a record.',
      params: { 'what_id!': str('Related record.'), 'subject!': str('Subject.'), type: oneOf(['Call', 'Meeting', 'Email'], 'Type.') },
    },
    {
      name: 'update_opportunity_stage',
      description: 'Move an opportunity to another sales stage, e.g. Closed Won.',
      params: { 'opportunity_id!': str('Opportunity.'), 'stage!': str('Stage name.'), amount: num('Amount.') },
    },
  ],
}

export const hubspot: NamespaceSpec = {
  ns: 'hubspot',
  product: 'HubSpot',
  tags: ['crm', 'marketing', 'sales'],
  writes: 'external',
  resources: [
    {
      name: 'contact',
      ops: ['list', 'get', 'create', 'update', 'search'],
      id: { 'contact_id!': str('Contact id.') },
      fields: {
        'email!': str('Email.'),
        firstname: str('First name.'),
        lastname: str('Last name.'),
        company: str('Company.'),
        lifecyclestage: str('Stage.'),
      },
    },
    {
      name: 'company',
      plural: 'companies',
      ops: ['list', 'get', 'create', 'search'],
      id: { 'company_id!': str('Company id.') },
      fields: { 'name!': str('Name.'), domain: str('Website domain.'), industry: str('Industry.') },
    },
    {
      name: 'deal',
      ops: ['list', 'get', 'create', 'update'],
      id: { 'deal_id!': str('Deal id.') },
      fields: { 'dealname!': str('Name.'), amount: num('Amount.'), dealstage: str('Pipeline stage.'), closedate: str('ISO.') },
    },
    {
      name: 'ticket',
      ops: ['list', 'create'],
      id: { 'ticket_id!': str('Ticket id.') },
      fields: { 'subject!': str('Subject.'), content: str('Details.'), hs_pipeline_stage: str('Stage.') },
    },
  ],
  tools: [
    {
      name: 'associate_objects',
      description: 'Associate two CRM records, e.g. a contact with a company or a deal.',
      params: { 'from_type!': str('Type.'), 'from_id!': str('Id.'), 'to_type!': str('Type.'), 'to_id!': str('Id.') },
    },
    {
      name: 'add_note',
      description: 'Add a note to the timeline of a contact, company or deal.',
      params: { 'object_type!': str('Type.'), 'object_id!': str('Id.'), 'body!': str('Note.') },
    },
    {
      name: 'enroll_in_sequence',
      description: 'Enroll a contact in a sales email sequence.',
      params: { 'contact_id!': str('Contact.'), 'sequence_id!': str('Sequence.') },
    },
    {
      name: 'list_pipelines',
      description: 'Deal and ticket pipelines with their stages.',
      params: { object_type: oneOf(['deals', 'tickets'], 'Which.') },
      sideEffect: 'none',
    },
    {
      name: 'get_form_submissions',
      description: 'Submissions of a marketing form on your website.',
      params: { 'form_id!': str('Form.') },
      sideEffect: 'none',
    },
  ],
}

const ticket = { 'ticket_id!': int('Ticket id.') }
export const zendesk: NamespaceSpec = {
  ns: 'zendesk',
  product: 'Zendesk',
  tags: ['support', 'helpdesk', 'tickets'],
  writes: 'external',
  resources: [
    {
      name: 'ticket',
      ops: ['list', 'get', 'create', 'update', 'delete', 'search'],
      id: ticket,
      fields: {
        'subject!': str('Subject.'),
        'comment!': str('First comment.'),
        requester_email: str('Requester.'),
        priority: oneOf(['low', 'normal', 'high', 'urgent'], 'Priority.'),
        status: oneOf(['new', 'open', 'pending', 'solved'], 'Status.'),
      },
      filters: { status: str('Status.'), assignee_id: int('Agent.') },
      about: 'Tickets are customer support requests.',
    },
    {
      name: 'user',
      ops: ['get', 'create', 'search'],
      id: { 'user_id!': int('User id.') },
      fields: { 'name!': str('Name.'), 'email!': str('Email.'), role: oneOf(['end-user', 'agent', 'admin'], 'Role.') },
    },
    { name: 'macro', ops: ['list'], id: { 'macro_id!': int('Macro id.') } },
    {
      name: 'article',
      ops: ['get', 'search'],
      id: { 'article_id!': int('Article id.') },
      about: 'Help center articles answer common questions.',
    },
  ],
  tools: [
    {
      name: 'add_ticket_comment',
      description: 'Reply to the requester on a ticket, or add a private internal note.',
      params: { ...ticket, 'body!': str('Comment.'), public: bool('Visible to the requester.') },
    },
    {
      name: 'list_ticket_comments',
      description: 'The conversation of a support ticket, oldest first.',
      params: ticket,
      sideEffect: 'none',
    },
    {
      name: 'apply_macro',
      description: 'Apply a macro (a canned set of actions and reply) to a ticket.',
      params: { ...ticket, 'macro_id!': int('Macro.') },
    },
    {
      name: 'merge_tickets',
      description: 'Merge duplicate tickets into one.',
      params: { 'target_id!': int('Ticket to keep.'), 'source_ids!': list('Tickets to merge in.', 'integer') },
    },
    {
      name: 'get_satisfaction_ratings',
      description: 'Customer satisfaction (CSAT) ratings and comments.',
      params: { score: oneOf(['good', 'bad'], 'Only these.'), since: str('ISO.') },
      sideEffect: 'none',
    },
  ],
}

export const quickbooks: NamespaceSpec = {
  ns: 'quickbooks',
  product: 'QuickBooks',
  tags: ['accounting', 'finance'],
  writes: 'external',
  resources: [
    {
      name: 'invoice',
      ops: ['list', 'get', 'create'],
      id: { 'invoice_id!': str('Invoice id.') },
      fields: { 'customer_id!': str('Customer.'), 'lines!': list('Line items.', 'object'), due_date: str('ISO.') },
    },
    {
      name: 'bill',
      ops: ['list', 'create'],
      id: { 'bill_id!': str('Bill id.') },
      fields: { 'vendor_id!': str('Vendor.'), 'lines!': list('Lines.', 'object'), due_date: str('ISO.') },
      about: 'Bills are what you owe suppliers.',
    },
    {
      name: 'vendor',
      ops: ['list', 'create'],
      id: { 'vendor_id!': str('Vendor id.') },
      fields: { 'display_name!': str('Name.'), email: str('Email.') },
    },
    {
      name: 'expense',
      ops: ['list', 'create'],
      id: { 'expense_id!': str('Expense id.') },
      fields: { 'account_id!': str('Expense account.'), 'amount!': num('Amount.'), payee: str('Payee.'), receipt: str('Receipt file.') },
    },
  ],
  tools: [
    {
      name: 'profit_and_loss',
      description: 'Profit and loss report (income statement) for a period.',
      params: { 'start_date!': str('ISO.'), 'end_date!': str('ISO.') },
      sideEffect: 'none',
    },
    { name: 'balance_sheet', description: 'Balance sheet report at a date.', params: { 'as_of!': str('ISO.') }, sideEffect: 'none' },
    {
      name: 'record_payment',
      description: 'Record a customer payment against invoices.',
      params: { 'customer_id!': str('Customer.'), 'amount!': num('Amount.'), invoice_ids: list('Invoices.') },
    },
    {
      name: 'aged_receivables',
      description: 'Unpaid customer invoices by how overdue they are.',
      params: { as_of: str('ISO.') },
      sideEffect: 'none',
    },
  ],
}

const envelope = { 'envelope_id!': str('Envelope id.') }
export const docusign: NamespaceSpec = {
  ns: 'docusign',
  product: 'DocuSign',
  tags: ['signatures', 'contracts'],
  writes: 'external',
  resources: [
    {
      name: 'envelope',
      ops: ['list', 'get'],
      id: envelope,
      filters: { status: oneOf(['sent', 'delivered', 'completed', 'declined', 'voided'], 'Status.'), from_date: str('ISO.') },
      about: 'An envelope holds documents sent out for signature.',
    },
    { name: 'template', ops: ['list', 'get'], id: { 'template_id!': str('Template id.') } },
  ],
  tools: [
    {
      name: 'send_envelope',
      description: 'Send documents to people to sign electronically.',
      params: { 'documents!': list('Files.'), 'signers!': list('Names and emails.', 'object'), 'subject!': str('Email subject.') },
    },
    {
      name: 'send_from_template',
      description: 'Send a document for signature from a DocuSign template.',
      params: { 'template_id!': str('Template.'), 'signers!': list('Roles, names and emails.', 'object') },
    },
    {
      name: 'void_envelope',
      description: 'Void (cancel) an envelope that has not been completed.',
      params: { ...envelope, 'reason!': str('Reason.') },
    },
    {
      name: 'download_signed_documents',
      description: 'Download the completed, signed documents of an envelope as PDF.',
      params: envelope,
      sideEffect: 'none',
    },
    { name: 'resend_envelope', description: 'Remind signers who have not signed yet.', params: envelope },
  ],
}
