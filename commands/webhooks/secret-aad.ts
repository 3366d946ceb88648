/** The associated data that binds a webhook's sealed signing secret to its row. */
export const secretAad = (webhookId: number): string => `webhook:${webhookId}`;
